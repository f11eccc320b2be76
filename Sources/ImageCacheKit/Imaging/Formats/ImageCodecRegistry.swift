/// The registry: which codec handles each format. A new format adds its case to
/// `ImageFormat`, its folder under `Formats/` with its conformance to `ImageCodec`, and one
/// line here; the switch is exhaustive, so the compiler names this place for a missing codec.
extension ImageFormat {
    /// The codec that reads this format.
    var codec: any ImageCodec.Type {
        switch self {
        case .jpeg: JPEGCodec.self
        case .png: PNGCodec.self
        case .gif: GIFCodec.self
        case .webp: WebPCodec.self
        case .avif: AVIFCodec.self
        }
    }

    /// Every codec, in the order of the cases, which is the order sniffing tries their magic
    /// numbers; built once, so a probe allocates nothing to walk it.
    static let codecs: [any ImageCodec.Type] = allCases.map(\.codec)
}
