import Foundation

/// A JSON value: what the client sends and receives (MCP results, arguments, handler replies).
///
/// Build values with literals (`["a": 1, "b": [true, "x"]]`), read them with subscripts
/// (`result["content"]?[0]?["text"]?.stringValue`), convert with `JSON.parse(_:)` / `text`, or go
/// through Codable with `JSON(encoding:)` and `decode(_:)`.
public enum JSON: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    /// An integer beyond Int64 (e.g. 2^64 or 10^29), kept exactly (up to 38 digits).
    case bigInt(Decimal)
    case double(Double)
    case string(String)
    case array([JSON])
    case object([String: JSON])
}

extension JSON {
    /// Parses JSON text (any value, not only objects).
    public static func parse(_ text: String) throws -> JSON {
        do {
            return try JSONDecoder().decode(JSON.self, from: Data(text.utf8))
        } catch {
            throw MCPError.other(MCPErrorInfo(status: MCPStatus.invalidJSON, message: "invalid JSON: \(error)"))
        }
    }

    /// Compact JSON text (object keys sorted).
    public var text: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding a JSON value only fails for non-finite doubles, which JSON cannot hold.
        guard let data = try? encoder.encode(self) else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }

    /// Any Encodable value as JSON.
    public init<T: Encodable>(encoding value: T) throws {
        let data = try JSONEncoder().encode(value)
        self = try JSONDecoder().decode(JSON.self, from: data)
    }

    /// Decodes this value into a Decodable type.
    public func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        let encoder = JSONEncoder()
        return try JSONDecoder().decode(type, from: try encoder.encode(self))
    }

    public subscript(key: String) -> JSON? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    public subscript(index: Int) -> JSON? {
        if case .array(let a) = self, a.indices.contains(index) { return a[index] }
        return nil
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// Integers, and doubles with an integral value.
    public var intValue: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d) where d.rounded() == d && abs(d) < 9.0e18: return Int64(d)
        default: return nil
        }
    }

    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .bigInt(let d): return NSDecimalNumber(decimal: d).doubleValue
        case .double(let d): return d
        default: return nil
        }
    }

    /// Any integer exactly (`int` and `bigInt`), as a Decimal.
    public var decimalValue: Decimal? {
        switch self {
        case .int(let i): return Decimal(i)
        case .bigInt(let d): return d
        default: return nil
        }
    }

    public var arrayValue: [JSON]? {
        if case .array(let a) = self { return a }
        return nil
    }

    public var objectValue: [String: JSON]? {
        if case .object(let o) = self { return o }
        return nil
    }

    public var isNull: Bool { self == .null }
}

extension JSON: Codable {
    public init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let i = try? c.decode(Int64.self) {
            self = .int(i)
        } else if let big = try? c.decode(Decimal.self), big.exponent >= 0, !big.isNaN,
            let d = try? c.decode(Double.self), abs(d) >= 9.2e18
        {
            // An integer no Int64 holds: a Double would lose its digits. Decimals
            // with a fraction stay Double, as in the other bindings.
            self = .bigInt(big)
        } else if let d = try? c.decode(Double.self) {
            self = .double(d)
        } else if let s = try? c.decode(String.self) {
            self = .string(s)
        } else if let a = try? c.decode([JSON].self) {
            self = .array(a)
        } else if let o = try? c.decode([String: JSON].self) {
            self = .object(o)
        } else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "not a JSON value")
        }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .int(let i): try c.encode(i)
        case .bigInt(let d): try c.encode(d)
        case .double(let d): try c.encode(d)
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }
}

extension JSON: CustomStringConvertible {
    public var description: String { text }
}

extension JSON: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSON)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
