#if canImport(Glibc)
import Glibc
#endif
import ImageCacheProtocol

/// Why a download could not be placed, kept or found: the facts that the server's wire
/// mapping turns into `forbidden` (a folder or file the rules refuse), `invalid_params` (with
/// `data.field`: `directory`, `filename`), `not_found`, the storage kinds of a failed file
/// operation (`StorageError`), or `internal`.
public indirect enum DownloadError: EngineError, Hashable {
    // The folder (docs/protocol.md, "download").

    /// None of the configured roots (`download_dir`) can be used.
    case noUsableRoot(roots: [String])
    /// `directory` is not an absolute path.
    case directoryNotAbsolute
    /// The requested folder's existing part cannot be resolved.
    case folderUnresolvable(String)
    /// The requested folder lies outside every root; `requested` when it is the client's path
    /// as given, false for a canonical folder reopened beneath a root.
    case outsideRoots(String, roots: [String], requested: Bool)
    /// The missing part of the requested folder holds `.` or `..`.
    case climbsOutOfMissingFolder(String)
    /// A component of the folder below its root is empty, `.`, `..` or holds a slash.
    case climbsOutOfRoot(String, component: String)
    /// A symbolic link stands in the folder's path below its root.
    case symbolicLinkInPath(String)
    /// A file stands in the folder's path.
    case notAFolder(String)
    /// The job's folder cannot be opened again; `cause` says why.
    case folderGone(String, cause: DownloadError)
    /// The job's folder was replaced by another folder while the job ran.
    case folderReplaced(String)

    // A peer of a shared daemon (docs/protocol.md, "Shared daemons"): neither root nor the
    // daemon's own uid.

    /// The peer's credentials could not be read: nobody to save for.
    case unknownPeer
    /// The requested folder (as given) leads through a symbolic link to `resolved`.
    case folderThroughSymbolicLink(String, resolved: String)
    /// The requested folder does not exist (the daemon makes folders only for its own uid).
    case folderMissingForPeer(String)
    /// A folder above the download folder (`blocker`) is not searchable for the peer.
    case folderNotReachable(String, blocker: String, uid: UInt32)
    /// The download folder belongs to another uid.
    case folderNotYours(String, owner: UInt32, uid: UInt32)
    /// The peer cannot write in the download folder (`mode`: its permission bits).
    case folderNotWritable(String, uid: UInt32, mode: UInt32)
    /// `overwrite` names a symbolic link.
    case overwriteSymbolicLink(String)
    /// `overwrite` names a file of another uid that the daemon did not save for this peer.
    case overwriteNotYours(String, owner: UInt32, uid: UInt32)

    // The file name.

    /// `filename` holds an invisible format character (`code` as `U+XXXX`).
    case invisibleCharacter(code: String)
    /// `filename` ends with a suffix the daemon names its own files with.
    case reservedSuffix(String)
    /// A live job holds the name `overwrite` asks for.
    case reservedByLiveJob(String)
    /// No ` (n)` name is free for `stem` in `folder`.
    case noFreeName(stem: String, folder: String)
    /// The `.part` was replaced by a symbolic link while the job ran.
    case partIsSymbolicLink(String)
    /// The `.part` was replaced by something other than the daemon's file while the job ran.
    case partReplaced(String)
    /// A file that is not a regular file stands at the `.part`'s name.
    case partNotRegular(String)

    // The job.

    /// A photo id the daemon never returned.
    case unknownPhoto(id: String)
    /// The id names a video: its still frame must not be saved as the photo.
    case notAPhoto(id: String)
    /// A job id nobody knows (or one expired).
    case unknownJob(String)
    /// The job's folder can no longer be used on its way (`stage`), for `cause`.
    case folderRefused(stage: Stage, cause: DownloadError)
    /// A file operation failed.
    case storage(StorageError)
    /// The daemon's own account of a state it cannot be in (a bug, not the outside's fault).
    case internalFault(String)

    /// Where on a job's way its folder was refused: each says what became of the job.
    public enum Stage: Sendable, Hashable {
        /// A job running on, whose folder changed under it.
        case goOn
        /// A job resumed (after a restart), whose folder cannot be reached again.
        case resume
        /// A verified body about to be moved to its final name.
        case save
    }

    /// A file operation on `what` that failed with `code`.
    public static func storage(_ what: String, errno code: Int32) -> DownloadError {
        .storage(StorageError(what, errno: code))
    }

    public var kind: ErrorKind {
        switch self {
        case .directoryNotAbsolute, .invisibleCharacter, .reservedSuffix: return .invalidParams
        case .unknownPhoto, .unknownJob: return .notFound
        case .notAPhoto: return .notAPhoto
        case .storage(let error): return error.kind
        case .internalFault: return .internal
        case .folderRefused(_, let cause) where cause.machineFailure != nil: return cause.kind
        case .noUsableRoot, .folderUnresolvable, .outsideRoots, .climbsOutOfMissingFolder, .climbsOutOfRoot,
             .symbolicLinkInPath, .notAFolder, .folderGone, .folderReplaced, .reservedByLiveJob, .noFreeName,
             .partIsSymbolicLink, .partReplaced, .partNotRegular, .folderRefused, .unknownPeer,
             .folderThroughSymbolicLink, .folderMissingForPeer, .folderNotReachable, .folderNotYours, .folderNotWritable,
             .overwriteSymbolicLink, .overwriteNotYours:
            return .forbidden
        }
    }

    /// The errno of a failure of the machine rather than of the folder's place (out of
    /// descriptors, a full or failing disk: `busy`, `storage_unavailable`), which passes and
    /// says nothing of where a folder is; nil for anything else (a missing folder included).
    package var machineFailure: Int32? {
        guard case .storage(let failure) = self, failure.code != ENOENT, failure.code != ENOTDIR,
              [.busy, .storageUnavailable].contains(failure.kind) else { return nil }
        return failure.code
    }

    /// The param at fault, for the refusals of a download's params.
    public var field: String? {
        switch self {
        case .directoryNotAbsolute: return "directory"
        case .invisibleCharacter, .reservedSuffix: return "filename"
        default: return nil
        }
    }

    /// The message for a person.
    public var description: String {
        switch self {
        case .noUsableRoot(let roots):
            return "no download root can be used (download_dir: \(roots.joined(separator: ", ")))"
        case .directoryNotAbsolute: return "'directory' must be an absolute path"
        case .folderUnresolvable(let path): return "the download folder \(path) cannot be resolved"
        case .outsideRoots(let path, let roots, let requested):
            return (requested ? "" : "the folder ") + "\(path) is outside the download roots (\(roots.joined(separator: ", ")))"
        case .climbsOutOfMissingFolder(let path): return "\(path) climbs out of a folder that does not exist"
        case .climbsOutOfRoot(let path, let component): return "the folder \(path) climbs out of its root (`\(component)` in its path)"
        case .symbolicLinkInPath(let path):
            return "the folder \(path) passes through a symbolic link below its download root (refused: a download never follows one)"
        case .notAFolder(let path): return "the folder \(path) is not a folder (a file stands in its path)"
        case .folderGone(let path, let cause): return "the download folder \(path) is gone (\(cause))"
        case .folderReplaced(let path):
            return "the download folder \(path) was replaced by another folder while the job ran; nothing was written to it"
        case .unknownPeer:
            return "the daemon could not read who you are (SO_PEERCRED), so it cannot tell where you may write; nothing is saved"
        case .folderThroughSymbolicLink(let path, let resolved):
            return "the folder \(path) leads through a symbolic link (to \(resolved)): a shared daemon saves only into a folder named by its own path"
        case .folderMissingForPeer(let path):
            return "the folder \(path) does not exist: a shared daemon makes folders only for its own user; create it yourself"
        case .folderNotReachable(let path, let blocker, let uid):
            return "you (uid \(uid)) cannot reach \(path): \(blocker) is not searchable for you"
        case .folderNotYours(let path, let owner, let uid):
            return "the folder \(path) belongs to uid \(owner), not to you (uid \(uid)): a shared daemon saves only into a folder of your own"
        case .folderNotWritable(let path, let uid, let mode):
            return "you (uid \(uid)) cannot write in \(path) (mode \(String(mode & 0o7777, radix: 8)))"
        case .overwriteSymbolicLink(let path):
            return "\(path) is a symbolic link: overwrite replaces only a regular file of yours"
        case .overwriteNotYours(let path, let owner, let uid):
            return "\(path) belongs to uid \(owner), not to you (uid \(uid)): overwrite replaces only your own files or one the daemon saved for you"
        case .invisibleCharacter(let code):
            return "'filename' holds an invisible format character (\(code)): a name must show what it is"
        case .reservedSuffix(let suffix): return "'filename' must not end with \(suffix): the daemon names its partial files so"
        case .reservedByLiveJob(let path): return "\(path) is reserved by a download job still running; overwrite never replaces it"
        case .noFreeName(let stem, let folder): return "no free name for \(stem) in \(folder)"
        case .partIsSymbolicLink(let path):
            return "\(path) was replaced by a symbolic link while the job ran; refused (a download never follows one)"
        case .partReplaced(let path):
            return "\(path) was replaced by something other than the daemon's partial file while the job ran; refused"
        case .partNotRegular(let path): return "\(path) exists and is not a regular file"
        case .unknownPhoto(let id): return "unknown photo id \(id) (search for it first)"
        case .notAPhoto(let id): return "\(id) is a video, not a photo: only photos are downloaded"
        case .unknownJob(let id): return "no download job \(id)"
        case .folderRefused(let stage, let cause):
            switch stage {
            case .goOn: return "the download cannot go on: \(cause)"
            case .resume: return "the download cannot resume: \(cause); its partial file, if any, is left where it is"
            case .save: return "the download cannot be saved: \(cause)"
            }
        case .storage(let error): return error.description
        case .internalFault(let what): return what
        }
    }
}
