import CMCPClient
import Foundation

/// C strings that live until the end of a `withCStrings` scope.
final class CStrings {
    private var owned: [UnsafeMutablePointer<CChar>] = []

    func c(_ s: String) throws -> UnsafePointer<CChar> {
        if s.utf8.contains(0) { throw MCPError.invalid("strings passed to the library must not contain NUL") }
        guard let p = strdup(s) else { fatalError("out of memory") }
        owned.append(p)
        return UnsafePointer(p)
    }

    func c(_ s: String?) throws -> UnsafePointer<CChar>? {
        guard let s else { return nil }
        return try c(s) as UnsafePointer<CChar>
    }

    func json(_ value: JSON?) throws -> UnsafePointer<CChar>? {
        guard let value else { return nil }
        return try c(value.text) as UnsafePointer<CChar>
    }

    fileprivate func release() {
        owned.forEach { free($0) }
        owned.removeAll()
    }
}

func withCStrings<R>(_ body: (CStrings) throws -> R) rethrows -> R {
    let strings = CStrings()
    defer { strings.release() }
    return try body(strings)
}

typealias ErrOut = UnsafeMutablePointer<OpaquePointer?>
typealias StrOut = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>

/// Runs a fallible C function; a non-OK status becomes the matching `MCPError`, read from the
/// call's own `err_out` (never from thread-local state).
func check(_ body: (ErrOut) -> mcp_status) throws {
    var err: OpaquePointer? = nil
    let status = body(&err)
    if status != MCP_OK { throw MCPError.take(status: status, error: err) }
    mcp_error_free(err)
}

/// Runs a fallible C function with a `char **` output; returns the string (library-freed).
func checkString(_ body: (StrOut, ErrOut) -> mcp_status) throws -> String {
    var out: UnsafeMutablePointer<CChar>? = nil
    try check { err in body(&out, err) }
    guard let out else { return "" }
    defer { mcp_string_free(out) }
    return String(cString: out)
}

func checkJSON(_ body: (StrOut, ErrOut) -> mcp_status) throws -> JSON {
    try JSON.parse(checkString(body))
}

/// Base class of everything handed to the library as userdata (released by `releaseUserdata`).
class CallbackBox {}

/// `userdata_free` for every registration: balances the `passRetained` of the box.
let releaseUserdata: mcp_userdata_free_fn = { userdata in
    guard let userdata else { return }
    Unmanaged<CallbackBox>.fromOpaque(userdata).release()
}

func retainedUserdata(_ box: CallbackBox) -> UnsafeMutableRawPointer {
    Unmanaged.passRetained(box).toOpaque()
}

func string(_ p: UnsafePointer<CChar>?, length: Int) -> String {
    guard let p else { return "" }
    return String(decoding: UnsafeRawBufferPointer(start: p, count: length), as: UTF8.self)
}

/// Seconds → the library's milliseconds: nil → 0 (the default), ≤ 0 or infinite → -1 (none).
func milliseconds(_ seconds: Double?) -> Int64 {
    guard let seconds else { return 0 }
    if seconds <= 0 || !seconds.isFinite { return -1 }
    return max(1, Int64((seconds * 1000).rounded()))
}

let abiChecked: Bool = mcp_abi_version() == UInt32(MCP_ABI_VERSION)
