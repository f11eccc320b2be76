import Foundation
import ImageCacheProtocol

/// The download jobs the daemon knows, by id, and the rules that read them: who may see a job,
/// which names live jobs hold, what `overwrite` may replace for an owner, and how long ended
/// jobs stay. A value owned by `DownloadManager` (its actor is the one place that changes it);
/// the table file is `DownloadJobStore`'s, written by `DownloadTableWriter`.
struct DownloadJobTable: Sendable {
    /// How long finished, failed and cancelled jobs stay listed.
    static let retention: TimeInterval = 24 * 3600

    /// The most ended jobs kept per owner (uid), the oldest dropped first: the table is
    /// rewritten whole on every change, so a day of busy downloads must not make it grow
    /// without bound, and one user's downloads never push out another's.
    static let endedLimitPerOwner = 1000

    /// Every job, by id.
    var records: [String: DownloadRecord]

    /// The record of job `id` when `viewer` may see it; the unknown-job error otherwise, the
    /// same for a job of another uid as for one that never existed.
    func visibleRecord(_ id: String, to viewer: Requester) throws(DownloadError) -> DownloadRecord {
        guard let record = records[id], viewer.maySee(jobOwnedBy: record.owner) else { throw .unknownJob(id) }
        return record
    }

    /// The jobs `viewer` may see, newest first.
    func visible(to viewer: Requester) -> [DownloadRecord] {
        records.values.filter { viewer.maySee(jobOwnedBy: $0.owner) }.sorted { $0.createdAt > $1.createdAt }
    }

    /// The unfinished jobs, oldest first (the order they resume in).
    var unfinished: [DownloadRecord] {
        records.values.filter(\.isUnfinished).sorted { $0.createdAt < $1.createdAt }
    }

    /// The names (final and `.part`) that live jobs other than `id` hold in `directory`:
    /// no job may take or replace them, `overwrite` or not.
    func heldNames(in directory: String, except id: String) -> Set<String> {
        var names = Set<String>()
        for record in records.values where record.id != id && record.isUnfinished && record.reservation.directory == directory {
            names.insert(record.reservation.name)
            names.insert(record.reservation.partName)
        }
        return names
    }

    /// What `overwrite` may replace for a job of `owner`: nil (anything) for root and the
    /// daemon's uid; for any other uid, its own files and those the daemon saved for it.
    func replacePolicy(owner: UInt32?) -> ReplacePolicy? {
        guard let owner, owner != 0, owner != PeerIdentity.daemonUID else { return nil }
        let saved = records.values.filter { $0.state == .finished && $0.owner == owner }.compactMap { record in
            record.reservation.part.map { ReplacePolicy.SavedFile(path: record.reservation.path, identity: $0) }
        }
        return ReplacePolicy(uid: owner, saved: Set(saved))
    }

    /// Drops the ended jobs past the retention, and past `endedLimitPerOwner` for each owner
    /// (oldest first); whether any went.
    @discardableResult
    mutating func dropEnded(now: Date = Date()) -> Bool {
        let horizon = now.addingTimeInterval(-Self.retention)
        var dropped: [String] = []
        let ended = Dictionary(grouping: records.values.filter { !$0.isUnfinished }, by: \.owner)
        for (_, jobs) in ended {
            let newestFirst = jobs.sorted { ($0.endedAt ?? $0.createdAt) > ($1.endedAt ?? $1.createdAt) }
            for (rank, job) in newestFirst.enumerated()
            where rank >= Self.endedLimitPerOwner || (job.endedAt ?? job.createdAt) < horizon {
                dropped.append(job.id)
            }
        }
        for id in dropped { records[id] = nil }
        return !dropped.isEmpty
    }
}
