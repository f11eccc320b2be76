import ImageCacheProtocol

/// Params a `RequestScanner` may read in place, for the hottest request.
///
/// A route whose params conform is offered the plain lines of its method before any JSON
/// tree is built (`RPCRouter.scan`): a memory-hit `thumbnail.show` is parsed in one pass from
/// bytes to its params by the one params decoder's scanning mode
/// (`StrictParamsDecoder.scan`), through the type's own `init(from:)` and `CodingKeys`. It
/// accepts only what the strict decoder would decode to the same value and declines (nil)
/// everything else: a null, a member of another type, an unknown name, two image
/// references. The line then takes the general path, where the strict decoder decodes it or
/// says precisely what is wrong. Conforming is all a type does: nothing lists its members
/// again.
protocol ScannableParams: Decodable & Sendable {}

extension ScannableParams {
    /// The params object at the scanner's position, read whole; nil to take the general path.
    static func scan(_ scanner: inout RequestScanner) -> Self? {
        StrictParamsDecoder.scan(Self.self, from: &scanner)
    }
}

extension ThumbnailShowParams: ScannableParams {}
