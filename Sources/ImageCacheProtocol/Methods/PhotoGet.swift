extension Methods {
    /// `photo.get`: one photo with the detail fields its provider has (a `Photo`).
    public enum PhotoGet: RPCMethod {
        public typealias Params = PhotoGetParams
        public typealias Result = Photo
        public static let name = MethodName.photoGet
    }
}

/// Params of `photo.get`.
public struct PhotoGetParams: RPCParams, Hashable {
    /// A photo id, `"<provider>:<provider's id>"`.
    public var photo: String

    public init(photo: String) {
        self.photo = photo
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case photo }

    public func validate() throws(RPCError) {
        try FieldCheck.photoID(photo, field: "photo")
    }
}
