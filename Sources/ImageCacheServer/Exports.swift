// The server speaks the protocol's types; whoever embeds it gets them without a second import.
@_exported import ImageCacheProtocol
