import ArgumentParser
import ImageCacheClient
import ImageCacheProtocol

/// `imagecache photo ID`: one photo's details (`photo.get`).
public struct PhotoCommand: ClientCommand {
    public static let configuration = CommandConfiguration(
        commandName: "photo",
        abstract: "Show one photo's details: author, links, EXIF, tags, location.",
        discussion: """
        Calls photo.get: the provider's detail answer merged with what a search said. Fields \
        the provider does not give are left out. Works for any id a search returned, also \
        when the provider cannot be reached (the daemon remembers them).

        EXAMPLES
          imagecache photo unsplash:Dwu85P9SOIk
          imagecache photo flickr:43213681030 --json | jq .exif
        """)

    @OptionGroup public var global: GlobalOptions

    @Argument(help: ArgumentHelp("A photo id (provider:id), as a search printed it.", valueName: "photo"))
    public var photo: String

    public init() {}

    public func validate() throws {
        try ImageArgument.check(photo)
        if isURL(photo) { throw ValidationError("photo takes a photo id (provider:id), not a URL; `imagecache show URL` fetches an image by URL.") }
    }

    public func run(connection: ImageCacheConnection) async throws {
        let result = try await connection.photo(photo)
        if global.jsonOutput {
            try JSONOutput.emit(result, global: global)
        } else {
            Output.line(PhotoSummary.render(result))
        }
    }
}

/// `imagecache photo`'s text: one labelled line per known field.
public enum PhotoSummary {
    /// The lines, joined with `\n`; unknown fields are left out, not shown as empty.
    public static func render(_ p: Photo) -> String {
        var lines: [(String, String)] = [("photo", p.id)]
        if let description = p.description, !description.isEmpty { lines.append(("title", DisplayWidth.truncate(description, to: Terminal.unlimited))) }
        lines.append(("author", p.author.name + (p.author.profileURL.map { " <\($0)>" } ?? "")))
        if let w = p.width, let h = p.height { lines.append(("size", "\(w)×\(h) px")) }
        if p.isVideo { lines.append(("media", "video (not downloadable as a photo)")) }
        if p.sponsored == true { lines.append(("sponsored", p.sponsor.map { "by \($0)" } ?? "yes")) }
        if let taken = p.takenAt { lines.append(("taken", taken)) }
        if let uploaded = p.uploadedAt { lines.append(("uploaded", uploaded)) }
        var counts: [String] = []
        if let likes = p.likes { counts.append(Units.count(likes, "like")) }
        if let views = p.views { counts.append(Units.count(views, "view")) }
        if let downloads = p.downloads { counts.append(Units.count(downloads, "download")) }
        if !counts.isEmpty { lines.append(("counts", counts.joined(separator: ", "))) }
        if let tags = p.tags, !tags.isEmpty { lines.append(("tags", tags.joined(separator: ", "))) }
        if let location = p.location {
            let place = [location.city, location.country].compactMap { $0 }.filter { !$0.isEmpty }
            if !place.isEmpty { lines.append(("location", place.joined(separator: ", "))) }
        }
        if let exif = p.exif {
            var parts: [String] = []
            let camera = [exif.make, exif.model].compactMap { $0 }.joined(separator: " ")
            if !camera.isEmpty { parts.append(camera) }
            if let exposure = exif.exposureTime { parts.append("\(exposure) s") }
            if let aperture = exif.aperture { parts.append("f/\(aperture)") }
            if let focal = exif.focalLength { parts.append("\(focal) mm") }
            if let iso = exif.iso { parts.append("ISO \(iso)") }
            if !parts.isEmpty { lines.append(("exif", parts.joined(separator: ", "))) }
        }
        if let page = p.pageURL { lines.append(("page", page)) }
        if let full = p.fullURL { lines.append(("full", full)) }
        lines.append(("thumb", p.thumbURL))
        return lines.map { DisplayWidth.pad($0.0, to: 9) + " " + DisplayWidth.printable($0.1) }.joined(separator: "\n")
    }
}
