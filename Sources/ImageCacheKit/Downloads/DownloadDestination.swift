import Foundation
#if canImport(Glibc)
import Glibc
#endif
import ImageCacheProtocol

/// Where a download may land and what it is called: the checks that keep `download` from
/// writing anywhere the user did not allow (docs/protocol.md, "download").
///
/// Roots and directories are compared after resolving them with `realpath`, so a symlink
/// inside a root that points elsewhere resolves to where it points and is refused, and `..`
/// cannot climb out; the folder is then opened beneath its root without following symlinks
/// (`DirectoryHandle`). Names are sanitised where the result is plainly what was meant (a
/// title with a slash in it gets a file, never a path) and refused where it could not be
/// (invisible format characters, a reserved suffix).
package enum DownloadDestination {
    /// The longest file name kept (bytes of UTF-8): `NAME_MAX` (255) less room for ` (9999)`
    /// and `.part`, so every name the daemon makes from it fits.
    package static let maxNameBytes = 255 - " (9999)".utf8.count - ".part".utf8.count

    /// The configured roots resolved with `realpath` (missing ones created first: the default
    /// `~/Downloads` often is missing on a server); roots that cannot be used are left out.
    package static func resolvedRoots(_ roots: [String], create: Bool) -> [String] {
        roots.compactMap { root -> String? in
            if create { try? FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true) }
            return realPath(root)
        }
    }

    /// The folder a download goes to, opened: `requested` (absolute) if it lies inside one of
    /// `roots` once both are resolved, symlinks included; the first root when nil.
    ///
    /// The requested path is resolved once (`realpath` of the part that exists, so a symlink
    /// that stays inside a root is allowed and recorded as where it points); the canonical path
    /// is then opened from the root's descriptor without following any symlink
    /// (`DirectoryHandle`), missing folders created one component at a time in the folder just
    /// opened. A symlink swapped in after the resolution is refused by that open.
    ///
    /// - Throws: `forbidden` (1010) when the folder is outside every root, or no root can be
    ///   used; `invalidParams` when `requested` is not absolute; `storage_unavailable` when the
    ///   folder cannot be created.
    ///
    /// For a `requester` that is neither root nor the daemon's uid (a peer of a shared daemon),
    /// `PeerDestinationCheck` also refuses (`forbidden`) a path through a symbolic link, a
    /// folder that does not exist yet, and a folder that peer could not write in itself.
    package static func resolveDirectory(_ requested: String?, roots: [String], for requester: Requester = .daemon,
                                        walk: BeneathRoot.Walk = .automatic) throws(DownloadError) -> DirectoryHandle {
        guard requester.isPrivileged else {
            guard let identity = requester.identity else { throw .unknownPeer }
            let folder = try resolveDirectory(requested, roots: roots, peerChecked: true, walk: walk)
            try PeerDestinationCheck.checkFolder(folder, for: identity)
            return folder
        }
        return try resolveDirectory(requested, roots: roots, peerChecked: false, walk: walk)
    }

    private static func resolveDirectory(_ requested: String?, roots: [String], peerChecked: Bool,
                                         walk: BeneathRoot.Walk) throws(DownloadError) -> DirectoryHandle {
        let resolvedRoots = resolvedRoots(roots, create: !peerChecked)
        guard let first = resolvedRoots.first else {
            throw .noUsableRoot(roots: roots)
        }
        guard let requested else { return try DirectoryHandle.open(first, roots: [first], create: false, walk: walk) }
        guard requested.hasPrefix("/") else {
            throw .directoryNotAbsolute
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
        guard let base = resolved else {
            throw .folderUnresolvable(requested)
        }
        guard resolvedRoots.contains(where: { inside(base, root: $0) }) else {
            throw .outsideRoots(requested, roots: roots, requested: true)
        }
        if missing.contains(where: { $0 == "." || $0 == ".." }) {
            throw .climbsOutOfMissingFolder(requested)
        }
        if peerChecked {
            try PeerDestinationCheck.checkRequested(requested, existing: existing, resolved: base, missing: missing)
        }
        let folder = missing.reduce(base) { $0 == "/" ? "/" + $1 : $0 + "/" + $1 }
        return try DirectoryHandle.open(folder, roots: resolvedRoots, create: true, walk: walk)
    }

    /// Suffixes the daemon gives its own files in a download folder: a name ending so (in any
    /// case, for case-insensitive file systems) could be taken for, or collide with, a job's
    /// partial body.
    package static let reservedSuffixes = [".part"]

    /// A client's `filename`, checked and cleaned (docs/protocol.md):
    /// refused when it holds format characters (Unicode `Cf`: bidi overrides such as U+202E,
    /// zero-width characters — a name that shows as something it is not) or ends with a reserved
    /// suffix once cleaned; otherwise `sanitise`d. nil when nothing is left (the default name
    /// is used).
    ///
    /// - Throws: `invalidParams` (-32602, field `filename`) saying which rule refused it.
    package static func checkedName(_ name: String) throws(DownloadError) -> String? {
        if let format = name.unicodeScalars.first(where: { $0.properties.generalCategory == .format }) {
            let code = "U+" + String(format.value, radix: 16, uppercase: true)
            throw .invisibleCharacter(code: code)
        }
        guard let clean = sanitise(name) else { return nil }
        if let suffix = reservedSuffix(of: clean) {
            throw .reservedSuffix(suffix)
        }
        return clean
    }

    /// The reserved suffix `name` ends with (case-insensitively), nil when none.
    package static func reservedSuffix(of name: String) -> String? {
        let lower = name.lowercased()
        return reservedSuffixes.first { lower.hasSuffix($0) }
    }

    /// A file name safe to create in a folder: Unicode NFC (so NFC and NFD spellings of one
    /// name are one file), control and line-separator characters and format characters (`Cf`)
    /// dropped, `/` and `\` replaced by `_`, every `..` collapsed to `.`, leading dots and
    /// spaces and trailing dots and spaces trimmed, at most `maxNameBytes` bytes with the
    /// extension kept. nil when nothing is left.
    package static func sanitise(_ name: String) -> String? {
        var scalars = String.UnicodeScalarView()
        for scalar in name.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator: continue
            default: scalars.append(scalar == "/" || scalar == "\\" ? "_" : scalar)
            }
        }
        // NFC after the filter: a dropped control between a letter and its accent would
        // otherwise leave a decomposed pair behind.
        var text = String(scalars).precomposedStringWithCanonicalMapping
        while text.contains("..") { text = text.replacingOccurrences(of: "..", with: ".") }
        text = trimmed(text)
        if text.utf8.count > maxNameBytes {
            // Cut the stem, keeping a short extension (`.jpg` stays `.jpg`); what the cut
            // exposes (a space, a dot) is trimmed after it.
            let (stem, ext) = split(text)
            if let ext, ext.utf8.count <= 16 {
                var cut = stem
                while cut.utf8.count + 1 + ext.utf8.count > maxNameBytes, !cut.isEmpty { cut.removeLast() }
                cut = trimmed(cut)
                text = cut.isEmpty ? "" : cut + "." + ext
            } else {
                while text.utf8.count > maxNameBytes { text.removeLast() }
                text = trimmed(text)
            }
        }
        return text.isEmpty ? nil : text
    }

    /// Leading dots and whitespace (a hidden file), trailing dots and whitespace (names some
    /// systems cannot open or show) removed, a character at a time with its combining marks:
    /// a dot or a space with a mark after it is one Character that is not "." or " ", yet the
    /// name would still start with a dot or end with a space, and trimming the dot or space
    /// alone would leave a lone mark at the name's edge.
    private static func trimmed(_ text: String) -> String {
        func trims(_ character: Character) -> Bool {
            guard let first = character.unicodeScalars.first else { return false }
            return first == "." || first.properties.isWhitespace
        }
        var kept = Substring(text)
        while let first = kept.first, trims(first) { kept.removeFirst() }
        while let last = kept.last, trims(last) { kept.removeLast() }
        return String(kept)
    }

    /// The stem of a default name: the photo id with its provider separated by `-`
    /// (`unsplash-abc123`), or the URL's last path component without its extension;
    /// `image` when neither gives anything usable. Short enough for any extension after it.
    package static func defaultStem(photo: String?, url: String) -> String {
        let stem: String
        if let photo, let name = sanitise(photo.replacingOccurrences(of: ":", with: "-")) {
            stem = name
        } else {
            stem = sanitise(split(lastPathComponent(of: url)).stem) ?? "image"
        }
        var cut = stem
        while cut.utf8.count > maxNameBytes - 5 { cut.removeLast() }
        return trimmed(cut).isEmpty ? "image" : trimmed(cut)
    }

    /// The extension a default name starts with, before the body is sniffed: the one the URL's
    /// path ends with when it names a format the daemon reads, else JPEG's (what providers
    /// serve). Corrected once the format is known.
    package static func guessedExtension(url: String) -> String {
        let named = split(lastPathComponent(of: url)).ext.flatMap { ImageFormat.named(byExtension: $0) }
        return (named ?? .jpeg).fileExtension
    }

    /// The last component of a URL's path ("" when it has none). Split here, by this type's
    /// own rules, never by Foundation's path-extension calls: `NSString.pathExtension` traps on
    /// some hostile paths (a fuzzed URL found one), and a URL is outside input.
    private static func lastPathComponent(of url: String) -> String {
        let path = URLComponents(string: url)?.path ?? ""
        return path.split(separator: "/").last.map(String.init) ?? ""
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
