extension ImageMetadataCensus {
    /// The census of a JPEG: its APPn and COM segments before the first scan, and what
    /// follows EOI.
    init(jpeg reader: ByteReader) {
        self.init()
        let metadata = JPEGMetadata(reader)
        metadataBytes = metadata.metadataBytes
        iccProfileBytes = metadata.iccProfile?.count ?? 0
        guard let scan = metadata.firstScanOffset,
              let end = JPEGMetadata.endOfImageOffset(reader, after: scan) else { return }
        isIntact = true
        metadataBytes += reader.count - (end + 2)
    }
}
