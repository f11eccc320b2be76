import Foundation
#if canImport(Glibc)
import Glibc
#endif
import ImageCacheProtocol

/// Where a download may land and what it is called: the checks that keep `download` from
/// writing anywhere the user did not allow (CONTRACT §5, `download`).
///
/// Roots and directories are compared after resolving them with `realpath`, so a symlink
/// inside a root that points elsewhere resolves to where it points and is refused, and `..`
/// cannot climb out. Names are sanitised rather than refused: a client that passes a title
/// with a slash in it gets a file, never a path.
public enum DownloadDestination {
    /// The longest file name kept (bytes of UTF-8), leaving room under `NAME_MAX` (255) for
    /// ` (9999)` and `.part`.
    public static let maxNameBytes = 200

    /// The resolved folder a download goes to: `requested` (absolute) if it lies inside one
    /// of `roots` once both are resolved, symlinks included; the first root when nil.
    ///
    /// Roots that do not exist yet are created (the default `~/Downloads` often is missing
    /// on a server); so are missing folders under a root, one component at a time, after
    /// their existing ancestor was checked to be inside it.
    ///
    /// - Throws: `forbidden` (1010) when the folder is outside every root, or no root can be
    ///   used; `forbidden` too when the folder cannot be created.
    public static func resolveDirectory(_ requested: String?, roots: [String]) throws(RPCError) -> String {
        let resolvedRoots = roots.compactMap { root -> String? in
            try? FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            return realPath(root)
        }
        guard let first = resolvedRoots.first else {
            throw RPCError(.forbidden, "no download root can be used (download_dir: \(roots.joined(separator: ", ")))")
        }
        guard let requested else { return first }
        guard requested.hasPrefix("/") else {
            throw RPCError(.invalidParams, "'directory' must be an absolute path", field: "directory")
        }
        // The deepest part of the path that exists, resolved; the rest must be plain names.
        var existing = requested
        var missing: [String] = []
        var resolved = realPath(existing)
        while resolved == nil {
            let url = URL(fileURLWithPath: existing)
            let name = url.lastPathComponent
            let parent = url.deletingLastPathComponent().path
            guard parent != existing, !name.isEmpty else { break }
            missing.insert(name, at: 0)
            existing = parent
            resolved = realPath(existing)
        }
        guard var folder = resolved else {
            throw RPCError(.forbidden, "the download folder \(requested) cannot be resolved")
        }
        guard let root = resolvedRoots.first(where: { inside(folder, root: $0) }) else {
            throw RPCError(.forbidden, "\(requested) is outside the download roots (\(roots.joined(separator: ", ")))")
        }
        for name in missing {
            guard name != ".", name != ".." else {
                throw RPCError(.forbidden, "\(requested) climbs out of a folder that does not exist")
            }
            folder += "/" + name
            if mkdir(folder, 0o755) != 0, errno != EEXIST {
                throw RPCError(.forbidden, "cannot create the download folder \(folder): \(String(cString: strerror(errno)))")
            }
        }
        // Re-resolve what was created (a racing symlink would show here) and check again.
        guard let final = realPath(folder), inside(final, root: root) else {
            throw RPCError(.forbidden, "\(requested) is outside the download roots (\(roots.joined(separator: ", ")))")
        }
        var info = stat()
        guard stat(final, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw RPCError(.forbidden, "\(requested) is not a folder")
        }
        return final
    }

    /// A file name safe to create in a folder: control characters dropped, `/` and `\`
    /// replaced by `_`, every `..` collapsed to `.`, leading dots and spaces and trailing
    /// spaces trimmed, at most `maxNameBytes` bytes. nil when nothing is left.
    public static func sanitise(_ name: String) -> String? {
        var scalars = String.UnicodeScalarView()
        for scalar in name.unicodeScalars {
            if scalar.properties.generalCategory == .control || scalar.value == 0x7F { continue }
            scalars.append(scalar == "/" || scalar == "\\" ? "_" : scalar)
        }
        var text = String(scalars)
        while text.contains("..") { text = text.replacingOccurrences(of: "..", with: ".") }
        // Cut to length first, so that what the cut exposes (a space) is trimmed after it.
        while text.utf8.count > maxNameBytes { text.removeLast() }
        // Leading dots by scalar: a dot with a combining mark after it is one Character that
        // is not ".", yet the name would still start with a dot (a hidden file).
        var start = text.unicodeScalars.startIndex
        while start < text.unicodeScalars.endIndex, text.unicodeScalars[start] == "." || text.unicodeScalars[start].properties.isWhitespace {
            start = text.unicodeScalars.index(after: start)
        }
        text = String(text.unicodeScalars[start...])
        while let last = text.last, last.isWhitespace { text.removeLast() }
        return text.isEmpty ? nil : text
    }

    /// The stem of a default name: the photo id with its provider separated by `-`
    /// (`unsplash-abc123`), or the URL's last path component without its extension;
    /// `image` when neither gives anything usable.
    public static func defaultStem(photo: String?, url: String) -> String {
        if let photo, let name = sanitise(photo.replacingOccurrences(of: ":", with: "-")) { return name }
        let path = URLComponents(string: url)?.path ?? ""
        let component = path.split(separator: "/").last.map(String.init) ?? ""
        let stem = (component as NSString).deletingPathExtension
        return sanitise(stem) ?? "image"
    }

    /// The extension a default name starts with, before the body is sniffed: the URL's when
    /// it names PNG, else `jpg` (what providers serve). Corrected once the format is known.
    public static func guessedExtension(url: String) -> String {
        let path = URLComponents(string: url)?.path.lowercased() ?? ""
        return path.hasSuffix(".png") ? "png" : "jpg"
    }

    /// The extension files of `format` are saved with.
    public static func fileExtension(for format: ImageFormat) -> String {
        format == .jpeg ? "jpg" : format.rawValue
    }

    /// Splits a chosen name into stem and extension, so numbering goes before the extension
    /// (`name (1).jpg`). A name without a dot (or only a leading one) has no extension.
    public static func split(_ name: String) -> (stem: String, ext: String?) {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return (name, nil) }
        let ext = String(name[name.index(after: dot)...])
        return ext.isEmpty ? (name, nil) : (String(name[..<dot]), ext)
    }

    static func inside(_ path: String, root: String) -> Bool {
        path == root || path.hasPrefix(root == "/" ? "/" : root + "/")
    }

    /// `realpath(3)`: the absolute path with every symlink, `.` and `..` resolved; nil when
    /// the path does not exist.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
