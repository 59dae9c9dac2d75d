import CMCPClient
import Foundation

/// One `${input:id}` of a VS Code configuration file the host is asked to answer.
public struct HubInput: Sendable {
    public let id: String
    public let description: String
    /// Mask what the user types.
    public let password: Bool
    public let defaultValue: String?
    /// A `pickString`'s choices (answer with one of them: another answer fails the servers using
    /// the input); empty for a `promptString`, which takes free text.
    public let options: [String]
}

/// How a host's configuration file is read (`Hub(file:)`, `Hub(text:)`, `reload`).
public struct HubReadOptions {
    /// What `${workspaceFolder}` stands for, and where a relative `envFile` starts.
    public var workspaceFolder: String?
    /// What `${userHome}` stands for (default: `$HOME`).
    public var userHome: String?
    /// Answers an input (nil declines: the servers using it are failed). Runs on the thread
    /// reading the file, at most once per id and read, before the read returns.
    public var onInput: ((HubInput) -> String?)?

    public init(workspaceFolder: String? = nil, userHome: String? = nil, onInput: ((HubInput) -> String?)? = nil) {
        self.workspaceFolder = workspaceFolder
        self.userHome = userHome
        self.onInput = onInput
    }

    /// Calls `body` with the C view of these options, valid during `body` only.
    func withC<R>(_ strings: CStrings, _ body: (UnsafePointer<mcp_hub_read_opts>) throws -> R) throws -> R {
        var opts = mcp_hub_read_opts()
        guard mcp_hub_read_opts_init(&opts, UInt32(MCP_HUB_READ_OPTS_VERSION)) == MCP_OK else {
            throw MCPError.invalid("the library does not know this header's mcp_hub_read_opts version")
        }
        opts.workspace_folder = try strings.c(workspaceFolder)
        opts.user_home = try strings.c(userHome)
        guard let onInput else { return try body(&opts) }
        let box = HubInputBox(onInput)
        return try withExtendedLifetime(box) {
            opts.on_input = hubInputThunk
            opts.input_userdata = Unmanaged.passUnretained(box).toOpaque()
            return try body(&opts)
        }
    }
}

final class HubInputBox {
    let fn: (HubInput) -> String?
    init(_ fn: @escaping (HubInput) -> String?) { self.fn = fn }
}

let hubInputThunk: mcp_hub_input_fn = { userdata, id, description, password, defaultValue, slot in
    guard let userdata else { return }
    let box = Unmanaged<HubInputBox>.fromOpaque(userdata).takeUnretainedValue()
    let choices = try? checkJSON { out, err in mcp_hub_input_slot_options_json(slot, out, err) }
    guard let options = choices?.arrayValue?.compactMap(\.stringValue) else { return }  // declined
    let input = HubInput(
        id: id.map { String(cString: $0) } ?? "", description: description.map { String(cString: $0) } ?? "",
        password: password, defaultValue: defaultValue.map { String(cString: $0) }, options: options)
    guard let answer = box.fn(input), !answer.utf8.contains(0) else { return }  // declined
    var err: OpaquePointer? = nil
    if mcp_hub_input_slot_set(slot, answer, &err) != MCP_OK { mcp_error_free(err) }
}

/// Hubs from a host's configuration file: `mcpServers` (claude_desktop_config.json, .mcp.json,
/// Cursor's mcp.json) or VS Code's `servers` and `inputs`, comments and trailing commas allowed.
/// Entries that cannot be built (an unset variable, a declined input, a refused setting) are
/// `failed` members; other hosts' keys are in `warnings()`. Only a file that cannot be read as a
/// whole throws. Nothing starts before `start()`.
extension Hub {
    public convenience init(file path: String, separator: String = "__", prefix: Bool = true, defaults: JSON? = nil,
                            read: HubReadOptions = HubReadOptions()) throws {
        try self.init(separator: separator, prefix: prefix, defaults: defaults) { options, out, err in
            try withCStrings { s in
                let p = try s.c(path)
                return try read.withC(s) { r in mcp_hub_new_from_file(p, options, r, out, err) }
            }
        }
    }

    public convenience init(text: String, separator: String = "__", prefix: Bool = true, defaults: JSON? = nil,
                            read: HubReadOptions = HubReadOptions()) throws {
        try self.init(separator: separator, prefix: prefix, defaults: defaults) { options, out, err in
            try withCStrings { s in
                let t = try s.c(text)
                return try read.withC(s) { r in mcp_hub_new_from_text(t, options, r, out, err) }
            }
        }
    }

    /// Reads the configuration file again and applies it: new members are added and started,
    /// removed ones closed, changed (or failed) ones restarted, the others keep their
    /// connections. Returns `{"added", "removed", "restarted", "unchanged"}` (arrays of names).
    /// A file that cannot be read as a whole throws and changes nothing.
    @discardableResult
    public func reload(file path: String, read: HubReadOptions = HubReadOptions()) throws -> JSON {
        try withCStrings { s in
            let p = try s.c(path)
            return try read.withC(s) { r in try checkJSON { mcp_hub_reload_from_file(handle, p, r, $0, $1) } }
        }
    }

    /// `reload(file:)` for the file's text.
    @discardableResult
    public func reload(text: String, read: HubReadOptions = HubReadOptions()) throws -> JSON {
        try withCStrings { s in
            let t = try s.c(text)
            return try read.withC(s) { r in try checkJSON { mcp_hub_reload_from_text(handle, t, r, $0, $1) } }
        }
    }

    /// Other hosts' keys this library ignores (`autoApprove`, `alwaysAllow`, …), each once with
    /// the servers it is on.
    public func warnings() throws -> [String] {
        (try checkJSON { mcp_hub_warnings_json(handle, $0, $1) }.arrayValue ?? []).compactMap(\.stringValue)
    }
}
