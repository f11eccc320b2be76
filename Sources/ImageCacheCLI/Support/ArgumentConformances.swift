import ArgumentParser
import ImageCacheProtocol

// The protocol's enums double as option values, so `--variant` and `cache clear WHAT` accept
// exactly the wire values and `--help` lists them.
extension DownloadVariant: ExpressibleByArgument {}
extension CacheClearTarget: ExpressibleByArgument {}
