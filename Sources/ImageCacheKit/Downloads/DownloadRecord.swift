import Foundation
import ImageCacheProtocol

/// One download job as the daemon keeps it on disk: enough to resume it after a restart
/// (where it goes, what it fetches, the validator its partial body came with) and to list it
/// for a day after it ended.
package struct DownloadRecord: Sendable, Codable, Hashable {
    /// The job id clients use.
    public var id: String
    /// The photo id, nil for a URL download.
    public var photo: String?
    /// The image URL fetched (image URLs carry no key; redacted before it is shown anyway).
    public var url: String
    /// The size asked for.
    package var variant: DownloadVariant
    /// Where the job is in its life.
    public var state: DownloadState
    /// The reserved final name and its `.part`.
    package var reservation: FileReservation
    /// Whether the name was chosen by the daemon (its extension then follows the sniffed format).
    package var defaultName: Bool
    /// Replace an existing file at the name.
    package var overwrite: Bool
    /// The `ETag` (else `Last-Modified`) the partial body came with: the `If-Range` of a resume.
    package var validator: String?
    /// Body bytes saved (final size once finished).
    public var received: Int
    /// The body's length when the server said it.
    public var total: Int?
    /// Of the saved image, once finished.
    public var width: Int?
    /// See `width`.
    public var height: Int?
    /// Why it failed or was cancelled, in the engine's words (the server maps it to the
    /// wire's error); stored in the wire error's JSON shape (`DownloadFailure`).
    package var error: DownloadFailure?
    /// Unsplash's download-tracking endpoint was requested for this job.
    package var tracked: Bool
    /// When `download` created it (list order, and `createdAt` of the job object).
    package var createdAt: Date
    /// When it finished, failed or was cancelled: the 24 h of listing count from here.
    package var endedAt: Date?
    /// The uid that started it: only that uid, root and the daemon's own uid see the job. nil
    /// in a row that names none: such a job is the daemon's uid's.
    package var owner: UInt32? = nil

    /// Whether the job still has work to do (and so resumes when the daemon starts).
    package var isUnfinished: Bool { state == .queued || state == .running }
}
