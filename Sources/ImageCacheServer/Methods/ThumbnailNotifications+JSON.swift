import ImageCacheProtocol

/// The params of a slot's notifications, written by hand in the order `encode(to:)` uses.
///
/// A shared-tier hit sends `thumbnail.dimensions` right before its answer, and a fetch sends
/// `thumbnail.progress` every 100 ms; Foundation's encoder took longer over one of these than
/// the rest of its way to the socket. A test checks both against `JSONEncoder`'s output for
/// every field's shape.
protocol SlotNotificationJSON {
    /// Writes the params object.
    func writeJSON(to out: inout JSONWriter)
    /// Most bytes `writeJSON` writes: the buffer is sized once.
    var jsonBound: Int { get }
}

extension SlotNotificationJSON {
    /// The `slot`, `view` and `photo` members every slot notification starts with.
    fileprivate static func writeSlot(_ slot: Int, view: String, photo: String?, to out: inout JSONWriter) {
        out.raw(#"{"slot":"#); out.int(slot)
        out.raw(#","view":"#); out.string(view)
        out.raw(#","photo":"#)
        if let photo { out.string(photo) } else { out.raw("null") }
    }

    fileprivate static func slotBound(view: String, photo: String?) -> Int {
        64 + JSONWriter.intBound + JSONWriter.stringBound(view) + (photo.map(JSONWriter.stringBound) ?? 0)
    }
}

extension ThumbnailDimensions: SlotNotificationJSON {
    func writeJSON(to out: inout JSONWriter) {
        Self.writeSlot(slot, view: view, photo: photo, to: &out)
        out.raw(#","width":"#); out.int(width)
        out.raw(#","height":"#); out.int(height)
        // Absent (not null) while unknown, as `encode(to:)` leaves them.
        if let blurHash { out.raw(#","blurHash":"#); out.string(blurHash) }
        if let color { out.raw(#","color":"#); out.string(color) }
        out.raw("}")
    }

    var jsonBound: Int {
        Self.slotBound(view: view, photo: photo) + 64 + 2 * JSONWriter.intBound
            + (blurHash.map(JSONWriter.stringBound) ?? 0) + (color.map(JSONWriter.stringBound) ?? 0)
    }
}

extension ThumbnailProgress: SlotNotificationJSON {
    func writeJSON(to out: inout JSONWriter) {
        Self.writeSlot(slot, view: view, photo: photo, to: &out)
        out.raw(#","received":"#); out.int(received)
        out.raw(#","total":"#)
        if let total { out.int(total) } else { out.raw("null") }
        out.raw("}")
    }

    var jsonBound: Int { Self.slotBound(view: view, photo: photo) + 32 + 2 * JSONWriter.intBound }
}
