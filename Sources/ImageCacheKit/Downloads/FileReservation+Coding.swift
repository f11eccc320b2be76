/// How a reservation is kept in the job table, and how one written before file identities is
/// read.
///
/// A table written by an older daemon names the placeholder and the `.part` by inode number
/// alone (`inode`, `partInode`). Such a number is read into a `FileIdentity` with no device and
/// no generation, which confirms no file: an old job never removes, adopts or lets a peer
/// replace a file by it. An unfinished old job so leaves its empty placeholder where it is and
/// saves its body at the next free ` (n)` name; a cancelled one leaves its placeholder and any
/// file its `.part` had already become; its finished file is not counted as the peer's for
/// `overwrite`. Tables written since carry whole identities (`placeholder`, `part`).
extension FileReservation {
    private enum Keys: String, CodingKey {
        case directory, stem, ext, number, placeholder, part
        /// The inode numbers an older table recorded in place of identities.
        case inode, partInode
    }

    /// Reads a reservation as written now, or as an older table wrote it (see above).
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        self.init(directory: try container.decode(String.self, forKey: .directory),
                  stem: try container.decode(String.self, forKey: .stem),
                  ext: try container.decodeIfPresent(String.self, forKey: .ext),
                  number: try container.decode(Int.self, forKey: .number),
                  placeholder: try Self.identity(container, .placeholder, legacy: .inode),
                  part: try Self.identity(container, .part, legacy: .partInode))
    }

    /// Writes the reservation with whole identities.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(directory, forKey: .directory)
        try container.encode(stem, forKey: .stem)
        try container.encodeIfPresent(ext, forKey: .ext)
        try container.encode(number, forKey: .number)
        try container.encodeIfPresent(placeholder, forKey: .placeholder)
        try container.encodeIfPresent(part, forKey: .part)
    }

    /// The identity under `key`, else an older table's bare inode number under `legacy` (an
    /// identity that confirms nothing), else nil.
    private static func identity(_ container: KeyedDecodingContainer<Keys>, _ key: Keys, legacy: Keys) throws -> FileIdentity? {
        if let identity = try container.decodeIfPresent(FileIdentity.self, forKey: key) { return identity }
        return try container.decodeIfPresent(UInt64.self, forKey: legacy).map {
            FileIdentity(device: nil, inode: $0, born: nil, changed: nil)
        }
    }
}
