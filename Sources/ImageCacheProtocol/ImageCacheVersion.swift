/// The one version of imagecached: the daemon reports it in `hello` and its start-up line, both
/// commands in `--version`, the HTTP client in its default User-Agent, and `scripts/package`
/// reads it from the built `imagecache --version` for the Debian package's version. Defined
/// here, in the layer both the daemon and the CLI import, so no second copy can drift.
package enum ImageCacheVersion {
    /// Semantic version of this build.
    package static let current = "0.1.0"
}
