import Foundation
import ImageCacheClient
import ImageCacheProtocol

/// `--json` output: the protocol's own result objects, pretty-printed with sorted keys so
/// the output is stable for diffs and tests, one document per command.
public enum JSONOutput {
    /// The JSON text of `value`.
    public static func text(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// `value` on one line (`--ndjson`): JSON escapes every newline inside strings, so the
    /// text never holds a raw one.
    public static func compact(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// Prints a command's JSON result: `--json` the whole document, pretty; `--ndjson` each
    /// of `records` compact on its own line (the list a script iterates: search's photos,
    /// download list's jobs), or the document itself on one line when it is no list.
    public static func emit<Document: Encodable, Record: Encodable>(_ document: Document, records: [Record]?, global: GlobalOptions) throws {
        if global.ndjson {
            if let records {
                for record in records { Output.line(try compact(record)) }
            } else {
                Output.line(try compact(document))
            }
        } else {
            Output.line(try text(document))
        }
    }

    /// `emit` for a result that is not a list.
    public static func emit(_ document: some Encodable, global: GlobalOptions) throws {
        try emit(document, records: Optional<[JSONValue]>.none, global: global)
    }

    /// The `{"error": …}` document of a failure: the daemon's error object as it was sent, or
    /// one of the same shape for a client-side failure (kind `daemon_not_running`, …).
    public static func errorText(_ error: any Error) -> String {
        let object: JSONValue
        if let rpc = error as? RPCError, let value = try? JSONValue(encoding: rpc) {
            object = value
        } else {
            let kind: String
            switch error {
            case ImageCacheClientError.daemonNotRunning: kind = "daemon_not_running"
            case ImageCacheClientError.permissionDenied: kind = "permission_denied"
            case ImageCacheClientError.connectFailed: kind = "connect_failed"
            case is ImageCacheClientError: kind = "connection_failed"
            case is UsageError: kind = "usage"
            case is CancellationError: kind = "interrupted"
            default: kind = "failure"
            }
            let message = (error as? ImageCacheClientError)?.description ?? (error as? UsageError)?.description ?? String(describing: error)
            object = .object(["code": .int(Int(ExitStatus(error: error).rawValue)), "message": .string(message),
                              "data": .object(["kind": .string(kind)])])
        }
        return (try? text(JSONValue.object(["error": object]))) ?? "{\"error\": null}"
    }

    /// `errorText` on one line, for `--ndjson`.
    public static func compactErrorText(_ error: any Error) -> String {
        guard let data = errorText(error).data(using: .utf8), let value = try? JSONDecoder().decode(JSONValue.self, from: data),
              let line = try? compact(value) else { return "{\"error\":null}" }
        return line
    }
}
