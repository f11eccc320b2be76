import Foundation
import ImageCacheProtocol
@testable import ImageCacheKit
import ImageCacheServer

/// `providers`: a provider's whole answer (status, headers, body) through `ProviderClient`,
/// the one door every upstream call goes through: quota headers, the rate limiter, status
/// mapping, the JSON decoders of Unsplash, Flickr and Pixabay, then what the engine does
/// next with a photo (`variant(forWidth:)`) and what it sends to clients (the JSON).
///
/// Input: one byte choosing the provider and the call (search, photo, download tracking),
/// then `STATUS\nName: value\n…\n\n` and the body. Properties: an answer or an engine error,
/// never a trap; no error carries the API key, whatever the provider echoes.
enum ProvidersTarget {
    static let target = FuzzTarget(name: "providers", summary: "ProviderClient + Unsplash/Flickr/Pixabay decoders on whole answers", run: run)

    static let key = "FUZZ-SECRET-KEY-0123456789"

    /// Answers every request with the same response.
    struct FixedAnswer: HTTPFetching {
        let response: HTTPResponse
        func fetch(_ request: HTTPRequest) async throws -> HTTPResponse { response }
    }

    static func run(_ bytes: UnsafeRawBufferPointer) {
        guard let selector = bytes.first else { return }
        let provider = ProviderID.allCases[Int(selector) % ProviderID.allCases.count]
        let call = Int(selector) / ProviderID.allCases.count % 3
        let response = Self.response(UnsafeRawBufferPointer(rebasing: bytes.dropFirst()))
        let client = ProviderClient(
            provider: makePhotoProvider(provider, settings: ProviderSettings(apiKey: key, apiURL: "https://api.fuzz.test")),
            fetcher: FixedAnswer(response: response),
            limiter: RateLimiter(provider: provider, burst: 1_000, perSecond: 1e9))
        let outcome: String? = FuzzCheck.blocking {
            do {
                switch call {
                case 0:
                    let page = try await client.search(SearchQuery(term: .query("fox"), page: 2, perPage: 20))
                    for photo in page.photos { use(photo) }
                    _ = try JSONValue(encoding: page.photos.map(\.photo))
                case 1:
                    use(try await client.photo(id: "abc"))
                default:
                    let photo = ProviderPhoto(
                        photo: Photo(id: "unsplash:abc", provider: "unsplash", width: 10, height: 10,
                                     thumbURL: "https://images.fuzz.test/t", fullURL: "https://images.fuzz.test/f",
                                     author: Photo.Author(name: "a", profileURL: nil), likes: nil, description: nil, pageURL: nil),
                        variants: [], downloadLocation: "https://api.fuzz.test/photos/abc/download")
                    _ = try await client.trackDownload(photo)
                }
                _ = await client.limiter.retryAfter()
                return nil
            } catch {
                _ = await client.limiter.retryAfter()
                // What a client reads of it: the server's one mapping (and what the log prints).
                guard let wire = WireErrorMapping.mapped(error) as? RPCError else { return "not an engine error: \(error)" }
                let shown = wire.message + (wire.data.body ?? "") + (try? JSONValue(encoding: wire)).map { "\($0)" }.orEmpty + "\(error)"
                return shown.contains(key) ? "an error carries the API key: \(error)" : nil
            }
        }
        if let outcome { FuzzCheck.fail(outcome) }
    }

    /// What the engine does with a photo: picks the image for a few widths.
    static func use(_ photo: ProviderPhoto) {
        for width in [1, 200, 1080, 5000] { _ = photo.variant(forWidth: width) }
    }

    /// `STATUS\nName: value\n…\n\n` then the body; without a blank line, all of it is a 200's body.
    static func response(_ bytes: UnsafeRawBufferPointer) -> HTTPResponse {
        let all = Array(bytes)
        guard let blank = (0..<max(0, all.count - 1)).first(where: { all[$0] == 0x0A && all[$0 + 1] == 0x0A }) else {
            return HTTPResponse(status: 200, headers: [], body: all)
        }
        let head = String(decoding: all[..<blank], as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        let status = head.first.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } ?? 200
        let headers: [(String, String)] = head.dropFirst().compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
        }
        return HTTPResponse(status: status, headers: headers, body: Array(all[(blank + 2)...]))
    }
}

extension Optional where Wrapped == String {
    /// The text, or "" when nil.
    var orEmpty: String { self ?? "" }
}
