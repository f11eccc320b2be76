import ImageCacheClient
import ImageCacheProtocol

/// How one demo step ended.
public enum DemoOutcome: Sendable, Equatable {
    /// It ran and showed what it should; the text is its result for a person.
    case passed(String)
    /// The daemon does not implement the method yet (-32601), or an earlier step it needs
    /// was skipped. Never a failure hidden: the reason is printed.
    case skipped(String)
    /// It ran and went wrong; the demo exits non-zero.
    case failed(String)
}

/// Thrown by a step that cannot run because an earlier one did not produce what it needs.
public struct DemoSkip: Error, Sendable {
    /// Printed after "skipped:".
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
}

/// One step of the demo: a title printed before it runs, and its work.
///
/// Steps are a plain list (`DemoScript.steps`), so showing one more behaviour is one more
/// element; state shared between steps (the photos found, the SVG path) lives in
/// `DemoState`.
public struct DemoStep: Sendable {
    /// What the step shows, printed as it starts.
    public var title: String
    /// The work; returns the text to print under the title.
    public var run: @Sendable (DemoContext) async throws -> String

    public init(_ title: String, run: @escaping @Sendable (DemoContext) async throws -> String) {
        self.title = title
        self.run = run
    }

    /// Runs the step and classifies how it ended: -32601 from the daemon is "not in this
    /// build" (skipped), anything else thrown is a failure.
    public func execute(in context: DemoContext) async -> DemoOutcome {
        await Self.classify { try await run(context) }
    }

    /// How a step's work ended; see `execute(in:)`.
    public static func classify(_ work: () async throws -> String) async -> DemoOutcome {
        do {
            return .passed(try await work())
        } catch let error as RPCError where error.kind == .methodNotFound {
            return .skipped("not in this build: the daemon answered method_not_found (\(error.message))")
        } catch let skip as DemoSkip {
            return .skipped(skip.reason)
        } catch {
            return .failed(ErrorMessage.render(error))
        }
    }
}

/// What every step can reach: the connection to the demo's daemon, its folders, and what
/// earlier steps found.
public struct DemoContext: Sendable {
    /// A session with the demo's daemon.
    public var connection: ImageCacheConnection
    /// The temporary folder holding config, socket, cache and downloads.
    public var workspace: String
    /// The download root given to the daemon.
    public var downloads: String
    /// Where the layout SVG goes (kept after the demo).
    public var svgPath: String
    /// Columns available for tables.
    public var width: Int
    /// Results passed between steps.
    public var state: DemoState
}

/// Results passed from one step to the next.
public actor DemoState {
    /// Photos of the first search page.
    public private(set) var photos: [Photo] = []
    /// The first search's query.
    public let query = "mountain lake"

    public init() {}

    /// Thumbnails delivered by the thumbnail step, by photo id, for the layout's SVG.
    public private(set) var thumbnails: [String: ThumbnailShowResult] = [:]

    /// Records the first page's photos for the layout, thumbnail and download steps.
    public func setPhotos(_ photos: [Photo]) { self.photos = photos }

    /// Records a delivered thumbnail.
    public func addThumbnail(_ photo: String, _ result: ThumbnailShowResult) { thumbnails[photo] = result }

    /// The photos, or a skip naming the step that should have found them.
    public func requirePhotos() throws -> [Photo] {
        guard !photos.isEmpty else { throw DemoSkip("needs the photos of the search step, which found none or did not run") }
        return photos
    }
}
