import Foundation

extension Client {
    /// A client from typed settings: `Configuration` (Configuration.swift, generated from
    /// include/mcp_client.config.schema.json) has one property per configuration key, nil ones
    /// left out.
    public convenience init(configuration: Configuration) throws {
        let data = try JSONEncoder().encode(configuration)
        try self.init(config: JSON.parse(String(decoding: data, as: UTF8.self)))
    }
}
