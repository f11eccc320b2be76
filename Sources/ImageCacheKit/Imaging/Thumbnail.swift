/// An encoded thumbnail, ready to be written to the cache as it is.
public struct Thumbnail: Sendable, Hashable {
    /// The encoded file (JPEG, or PNG when the source had alpha).
    public var bytes: [UInt8]
    /// Width of the encoded picture: exactly the requested width, unless the source was narrower.
    public var width: Int
    /// Height of the encoded picture, upright, following the source's aspect ratio.
    public var height: Int
    /// The format of `bytes`.
    public var format: ImageFormat
    /// The source's header, for its full upright dimensions (the layout's `dims: "decoded"`).
    public var source: ImageHeader
    /// The placeholder of the thumbnail's pixels, when asked for (`makeThumbnail(…placeholder:)`).
    package var placeholder: ImagePlaceholder? = nil

    /// The MIME type of `bytes` (the contract's `mime`).
    package var mimeType: String { format.mimeType }
}
