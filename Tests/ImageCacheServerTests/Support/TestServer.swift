import Foundation
import ImageCacheConfig
import ImageCacheKit
import ImageCacheServer
import Logging
import TestSupport

/// An in-process server on a real Unix socket in a fresh temporary folder, with the core
/// methods plus whatever a test registers.
struct TestServer {
    let server: RPCServer
    let folder: String
    let path: String
    let listener: ListeningSocket

    static let logger: Logger = {
        var logger = Logger(label: "imagecached-test")
        logger.logLevel = .critical
        return logger
    }()

    /// A short temporary folder (socket paths must fit in 108 bytes).
    static func makeFolder() -> String {
        var template = Array("/tmp/icst-XXXXXX".utf8CString)
        let folder = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        return folder
    }

    static func start(limits: ServerLimits = ServerLimits(), configuration: CacheConfiguration = CacheConfiguration(),
                      extend: (inout RPCRouter) -> Void = { _ in }) async throws -> TestServer {
        let folder = makeFolder()
        let path = folder + "/d.sock"
        var router = RPCRouter()
        let stats = StatsRegistry()
        CoreMethods(configuration: ConfigurationStore(configuration), stats: stats).register(in: &router)
        extend(&router)
        let server = RPCServer(router: router, limits: { limits }, logger: logger)
        stats.register("sessions") { $0.sessions = server.sessionCount }
        let listener = try SocketBinder.bind(path: path, group: nil, logger: logger)
        try await server.start(on: listener)
        listener.releaseLock()
        return TestServer(server: server, folder: folder, path: path, listener: listener)
    }

    /// `start(limits:configuration:extend:)`, `body` with the server, then `stop()`, also when
    /// `body` throws.
    static func with<Result>(limits: ServerLimits = ServerLimits(), configuration: CacheConfiguration = CacheConfiguration(),
                             extend: (inout RPCRouter) -> Void = { _ in },
                             _ body: (TestServer) async throws -> Result) async throws -> Result {
        try await finishing(try await start(limits: limits, configuration: configuration, extend: extend),
                            with: { await $0.stop() }, body)
    }

    func connect(reading: Bool = true) async throws -> RawClient {
        try await RawClient.connect(path, reading: reading)
    }

    func stop() async {
        await server.shutdown(gracePeriod: .seconds(5))
        listener.removeSocketFile()
        try? FileManager.default.removeItem(atPath: folder)
    }
}

extension Dictionary where Key == String, Value == Any {
    /// `error.code` of a response, or nil.
    var errorCode: Int? { (self["error"] as? [String: Any])?["code"] as? Int }
    /// `error.data.kind` of a response, or nil.
    var errorKind: String? { ((self["error"] as? [String: Any])?["data"] as? [String: Any])?["kind"] as? String }
    /// `error.data` of a response.
    var errorData: [String: Any] { ((self["error"] as? [String: Any])?["data"] as? [String: Any]) ?? [:] }
    /// `result` as an object.
    var resultObject: [String: Any]? { self["result"] as? [String: Any] }
    /// Whether `id` is JSON null (present and null).
    var idIsNull: Bool { self.keys.contains("id") && self["id"] is NSNull }
}
