import Foundation
@testable import ImageCacheKit

/// `filename`: the download file name sanitiser (`DownloadDestination.sanitise`) on any text a
/// client can send as `filename` (and on photo ids and URLs, through `defaultStem`), then the
/// name `FileReservation` builds from it.
///
/// Properties, as documented: a name (never a path: no `/`, no NUL, no control character),
/// NFC, without format (`Cf`) characters, not `.`/`..` and not hidden (no leading dot), no
/// leading or trailing space, no trailing dot, a client's name never with a reserved suffix, at most
/// `maxNameBytes` bytes, so that the numbered `.part` name stays under NAME_MAX (255).
enum FilenameTarget {
    static let target = FuzzTarget(name: "filename", summary: "DownloadDestination.sanitise, defaultStem and the reserved name", run: run)

    static func run(_ bytes: UnsafeRawBufferPointer) {
        let text = FuzzCheck.text(bytes)
        if let clean = DownloadDestination.sanitise(text) {
            check(clean, from: text)
            let (stem, ext) = DownloadDestination.split(clean)
            let reservation = FileReservation(directory: "/d", stem: stem, ext: ext, number: FileReservation.maxNumber)
            // By bytes: a combining mark at the name's start joins the "/" before it into one Character.
            FuzzCheck.require(reservation.partPath.utf8.starts(with: "/d/".utf8) && !reservation.partPath.utf8.dropFirst(3).contains(UInt8(ascii: "/")),
                              "\(text.debugDescription) reserves \(reservation.partPath.debugDescription)")
            FuzzCheck.require((reservation.name + ".part").utf8.count <= 255,
                              "\(text.debugDescription): \((reservation.name + ".part").utf8.count) bytes, over NAME_MAX")
        }
        // A client's name: refused (never a trap) or a clean name without a reserved suffix.
        if let checked = try? DownloadDestination.checkedName(text) {
            check(checked, from: text)
            FuzzCheck.require(DownloadDestination.reservedSuffix(of: checked) == nil,
                              "\(text.debugDescription) → \(checked.debugDescription) ends with a reserved suffix")
        }
        check(DownloadDestination.defaultStem(photo: text, url: "https://e.test/x.jpg"), from: text)
        check(DownloadDestination.defaultStem(photo: nil, url: text), from: text)
        _ = DownloadDestination.guessedExtension(url: text)
    }

    static func check(_ name: String, from text: String) {
        let bytes = Array(name.utf8)
        FuzzCheck.require(!bytes.isEmpty && bytes.count <= DownloadDestination.maxNameBytes,
                          "\(text.debugDescription) → \(name.debugDescription): \(bytes.count) bytes")
        FuzzCheck.require(!bytes.contains(UInt8(ascii: "/")) && !bytes.contains(0),
                          "\(text.debugDescription) → \(name.debugDescription) is a path")
        FuzzCheck.require(!name.unicodeScalars.contains { $0.properties.generalCategory == .control || $0.value == 0x7F },
                          "\(text.debugDescription) → \(name.debugDescription) holds a control character")
        FuzzCheck.require(bytes.first != UInt8(ascii: "."), "\(text.debugDescription) → \(name.debugDescription) starts with a dot")
        FuzzCheck.require(!(name.first?.isWhitespace ?? false) && !(name.last?.isWhitespace ?? false),
                          "\(text.debugDescription) → \(name.debugDescription) starts or ends with a space")
        FuzzCheck.require(bytes.last != UInt8(ascii: "."), "\(text.debugDescription) → \(name.debugDescription) ends with a dot")
        FuzzCheck.require(!name.unicodeScalars.contains { $0.properties.generalCategory == .format },
                          "\(text.debugDescription) → \(name.debugDescription) holds a format (Cf) character")
        FuzzCheck.require(name == name.precomposedStringWithCanonicalMapping && Array(name.utf8) == Array(name.precomposedStringWithCanonicalMapping.utf8),
                          "\(text.debugDescription) → \(name.debugDescription) is not NFC")
    }
}
