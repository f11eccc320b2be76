import ImageCacheCLI

// Everything lives in ImageCacheCLI so it can be tested; this only runs the parsed command.
await ImageCacheRoot.runMain()
