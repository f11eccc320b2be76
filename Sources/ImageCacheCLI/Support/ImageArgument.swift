import ArgumentParser

/// Checks of a `PHOTO|URL` argument that catch a mistake by its cause before the daemon
/// answers a generic `invalid_params`: a download job id where a photo id is wanted.
public enum ImageArgument {
    /// Throws a usage error naming the command that takes `word` when it is a job id.
    public static func check(_ word: String) throws {
        if JobID.looksLikeJobID(word) {
            throw ValidationError("\(word) is a download job id, not a photo id: "
                                  + "see it with `imagecache download status \(word)` (photo ids look like unsplash:Dwu85P9SOIk).")
        }
    }
}
