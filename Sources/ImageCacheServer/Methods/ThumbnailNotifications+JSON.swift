import ImageCacheProtocol

// The params of a slot's notifications, written by hand in the order `encode(to:)` uses.
//
// A shared-tier hit sends `thumbnail.dimensions` right before its answer, and a fetch sends
// `thumbnail.progress` every 100 ms; Foundation's encoder took longer over one of these than
// the rest of its way to the socket. A test checks both against `JSONEncoder`'s output for
// every field's shape.

/// The members every slot notification starts with.
private enum SlotMembers {
    /// Writes `{"slot":…,"view":…,"photo":…` (the object left open).
    static func write(_ slot: Int, view: String, photo: String?, to out: inout JSONWriter) {
        out.raw(#"{"slot":"#); out.int(slot)
        out.raw(#","view":"#); out.string(view)
        out.raw(#","photo":"#)
        if let photo { out.string(photo) } else { out.raw("null") }
    }

    /// Most bytes `write` writes, with room for the members that follow's names.
    static func bound(view: String, photo: String?) -> Int {
        64 + JSONWriter.intBound + JSONWriter.stringBound(view) + (photo.map(JSONWriter.stringBound) ?? 0)
    }
}

extension ThumbnailDimensions: JSONWritable {
    func writeJSON(to out: inout JSONWriter) {
        SlotMembers.write(slot, view: view, photo: photo, to: &out)
        out.raw(#","width":"#); out.int(width)
        out.raw(#","height":"#); out.int(height)
        // Absent (not null) while unknown, as `encode(to:)` leaves them.
        if let blurHash { out.raw(#","blurHash":"#); out.string(blurHash) }
        if let color { out.raw(#","color":"#); out.string(color) }
        out.raw("}")
    }

    var jsonBound: Int {
        SlotMembers.bound(view: view, photo: photo) + 64 + 2 * JSONWriter.intBound
            + (blurHash.map(JSONWriter.stringBound) ?? 0) + (color.map(JSONWriter.stringBound) ?? 0)
    }
}

extension ThumbnailProgress: JSONWritable {
    func writeJSON(to out: inout JSONWriter) {
        SlotMembers.write(slot, view: view, photo: photo, to: &out)
        out.raw(#","received":"#); out.int(received)
        out.raw(#","total":"#)
        if let total { out.int(total) } else { out.raw("null") }
        out.raw("}")
    }

    var jsonBound: Int { SlotMembers.bound(view: view, photo: photo) + 32 + 2 * JSONWriter.intBound }
}
