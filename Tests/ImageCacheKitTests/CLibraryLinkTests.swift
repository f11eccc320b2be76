import CCurl
import CPNG
import CTurboJPEG
import Foundation
import ImageCacheKit
import ProviderSimulator
import Testing
import TestSupport

/// One real call into each C library, so a broken link or a missing -dev package fails CI
/// here, by name, rather than somewhere deep in the engine.
@Suite("C libraries link and work", .timeLimit(.minutes(1)))
struct CLibraryLinkTests {
    @Test("libcurl fetches a body from the loopback server")
    func curlFetchesFromLoopback() async throws {
        let server = try await LoopbackHTTPServer { request in
            request.path == "/hello" ? .text("hello from loopback") : .text("no", status: 404)
        }
        defer { Task { await server.shutdown() } }
        let url = server.baseURL + "/hello"
        let (status, body) = try await Task.detached { try EasyFetch.get(url) }.value
        #expect(status == 200)
        #expect(String(decoding: body, as: UTF8.self) == "hello from loopback")
    }

    @Test("TurboJPEG reads a JPEG header")
    func turboJPEGReadsHeader() throws {
        var bytes = try Corpus.bytes("jpeg/libjpeg-turbo/testorig.jpg")
        let handle = try #require(tjInitDecompress())
        defer { tjDestroy(handle) }
        var width: Int32 = 0, height: Int32 = 0, subsamp: Int32 = 0, colorspace: Int32 = 0
        let rc = tjDecompressHeader3(handle, &bytes, UInt(bytes.count), &width, &height, &subsamp, &colorspace)
        #expect(rc == 0)
        #expect(width == 227)
        #expect(height == 149)
    }

    @Test("libpng reads a PNG header")
    func libpngReadsHeader() throws {
        let bytes = try Corpus.bytes("pngsuite/basn2c08.png")
        var image = png_image()
        image.version = IC_PNG_IMAGE_VERSION
        let ok = bytes.withUnsafeBytes { raw in
            png_image_begin_read_from_memory(&image, raw.baseAddress, raw.count)
        }
        defer { png_image_free(&image) }
        #expect(ok != 0)
        #expect(image.width == 32)
        #expect(image.height == 32)
    }

    @Test("libcrypto computes SHA-256")
    func sha256() {
        #expect(SHA256Digest.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}

/// A blocking single GET with curl's easy interface: just enough to prove the link.
private enum EasyFetch {
    final class Sink { var bytes: [UInt8] = [] }

    static func get(_ url: String) throws -> (Int, [UInt8]) {
        guard let easy = curl_easy_init() else { throw CurlFailure(code: -1) }
        defer { curl_easy_cleanup(easy) }
        let sink = Sink()
        let context = Unmanaged.passRetained(sink)
        defer { context.release() }
        _ = ic_easy_setopt_string(easy, CURLOPT_URL, url)
        _ = ic_easy_setopt_string(easy, CURLOPT_PROXY, "")  // never the environment's proxy
        _ = ic_easy_setopt_write(easy, collect)
        _ = ic_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, context.toOpaque())
        let rc = curl_easy_perform(easy)
        guard rc == CURLE_OK else { throw CurlFailure(code: Int(rc.rawValue)) }
        var status = 0
        _ = ic_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        return (status, sink.bytes)
    }

    struct CurlFailure: Error { let code: Int }

    static let collect: curl_write_callback = { data, size, count, user in
        let sink = Unmanaged<Sink>.fromOpaque(user!).takeUnretainedValue()
        let n = size * count
        sink.bytes += UnsafeRawBufferPointer(start: data, count: n)
        return n
    }
}
