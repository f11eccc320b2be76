import Foundation
import ImageCacheKit

/// After the chaos soak, with the daemon stopped: every file of the cache's data decoded with
/// the engine's own validator (`Thumbnailer.validate`, a whole decode). Thumbnails are JPEG or
/// PNG; anything else under data/ (search pages, photo records) is counted, not decoded.
struct CacheEntryCheck {
    var images = 0
    var decodable = 0
    var others = 0
    var failures: [String] = []

    static func run(cacheDir: String) -> CacheEntryCheck {
        var check = CacheEntryCheck()
        let data = cacheDir + "/data"
        guard let walker = FileManager.default.enumerator(atPath: data) else { return check }
        while let name = walker.nextObject() as? String {
            guard walker.fileAttributes?[.type] as? FileAttributeType == .typeRegular,
                  let contents = FileManager.default.contents(atPath: data + "/" + name) else { continue }
            let bytes = [UInt8](contents)
            let isJPEG = bytes.starts(with: [0xFF, 0xD8, 0xFF])
            let isPNG = bytes.starts(with: [0x89, 0x50, 0x4E, 0x47])
            guard isJPEG || isPNG else {
                check.others += 1
                continue
            }
            check.images += 1
            do {
                _ = try Thumbnailer.validate(bytes)
                check.decodable += 1
            } catch {
                if check.failures.count < 20 { check.failures.append("data/\(name) (\(bytes.count) bytes): \(error)") }
            }
        }
        return check
    }
}
