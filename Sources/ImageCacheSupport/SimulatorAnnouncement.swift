import Foundation

/// Where the demo's provider simulator listens: the one JSON line `imagecache-simulator` writes
/// on stdout once both its servers do, `{"api": …, "images": …, "log": …}`, and that
/// `imagecache demo` and `imagecache simulator` read from the child they started.
///
/// One type on both sides of the pipe, so the writer and the reader cannot drift apart; it
/// lives here because the two programs share no other target that is not the engine's.
public struct SimulatorAnnouncement: Codable, Sendable, Equatable {
    /// The provider APIs' base URL (`/unsplash`, `/flickr/services/rest`, `/pixabay/api` below
    /// it): what the daemon's `api_url`s are built on.
    public var api: String
    /// The image host's base URL.
    public var images: String
    /// `GET` it for every request both servers saw.
    public var log: String

    /// The simulator's own answer, from where its servers listen.
    public init(api: String, images: String, log: String) {
        self.api = api
        self.images = images
        self.log = log
    }

    /// Reads the line the simulator wrote; throws when it is not this shape.
    public init(line: String) throws {
        self = try JSONDecoder().decode(Self.self, from: Data(line.utf8))
    }

    /// The line, without its newline: sorted keys and slashes unescaped, for a reading script.
    public func line() throws -> String {
        try Self.line(self)
    }

    /// Any value as such a line (`imagecache simulator` prints its own, longer one the same way).
    public static func line(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
