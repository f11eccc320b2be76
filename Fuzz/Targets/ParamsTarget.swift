@testable import ImageCacheProtocol
@testable import ImageCacheServer

/// `params`: `StrictParamsDecoder.decodeAndValidate` on any JSON a line can carry, into every
/// method's params type, as the router runs it. Each must answer a value or an
/// `invalid_params` error naming a field, never trap; a value that passed must survive its
/// own encoding (results and logs encode params).
enum ParamsTarget {
    static let target = FuzzTarget(name: "params", summary: "StrictParamsDecoder into every method's params", run: run)

    /// Decodes `value` as `P`: either a value, or an error of kind invalid_params with a field.
    static func decode<P: RPCParams>(_: P.Type, _ value: JSONValue) {
        do {
            let decoded = try StrictParamsDecoder.decodeAndValidate(P.self, from: value)
            _ = try JSONValue(encoding: decoded)
        } catch let error as RPCError {
            FuzzCheck.require(error.code == ErrorKind.invalidParams.code && error.data.field != nil,
                              "\(P.self): an error other than invalid_params with a field: \(error)")
        } catch {
            FuzzCheck.fail("\(P.self): decoded, then not encodable: \(error)")
        }
    }

    static func run(_ bytes: UnsafeRawBufferPointer) {
        guard JSONNesting.scan(bytes, limit: JSONNesting.maximumDepth) == .acceptable,
              let value = try? JSONLineParser.parse(bytes) else { return }
        decode(ThumbnailShowParams.self, value)
        decode(ThumbnailRecycleParams.self, value)
        decode(SearchParams.self, value)
        decode(PhotoGetParams.self, value)
        decode(LayoutParams.self, value)
        decode(PrefetchParams.self, value)
        decode(PrefetchCancelParams.self, value)
        decode(DownloadParams.self, value)
        decode(DownloadJobParams.self, value)
        decode(CancelParams.self, value)
        decode(CacheEvictParams.self, value)
        decode(CacheClearParams.self, value)
        // Methods without params (`hello`, `stats`, `download.list`) accept `{}` alone.
        do {
            _ = try StrictParamsDecoder.decodeAndValidate(NoParams.self, from: value)
        } catch {
            FuzzCheck.require(error.code == ErrorKind.invalidParams.code && error.data.field != nil,
                              "NoParams: an error other than invalid_params with a field: \(error)")
        }
    }
}
