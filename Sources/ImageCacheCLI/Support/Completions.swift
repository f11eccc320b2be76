import ArgumentParser
import Foundation
import ImageCacheClient

/// What the shell completions offer beyond the parser's own (subcommands, flags): the
/// provider names, and the job ids of the daemon the command line would ask.
public enum Completions {
    /// The providers `--provider` takes (protocol.md, `search`).
    public static let providers = ["unsplash", "flickr", "pixabay"]

    /// The longest a completion waits for the daemon: a shell waiting on Tab must not hang
    /// on a daemon that does not answer.
    static let jobListTimeout: Duration = .seconds(2)

    /// Job ids from `download.list` of the daemon at the command line's `--socket` (else
    /// the usual look-up), newest first; none when no daemon answers in time.
    public static let jobIDs = CompletionKind.custom { words, _, _ async -> [String] in
        let choice = SocketLookup.resolve(flag: socketFlag(in: words), environment: ProcessInfo.processInfo.environment)
        return await jobIDs(socketPath: choice.path, within: jobListTimeout)
    }

    /// The value of the last `--socket PATH` or `--socket=PATH` among `words`.
    static func socketFlag(in words: [String]) -> String? {
        var found: String?
        for (index, word) in words.enumerated() {
            if word == "--socket", index + 1 < words.count {
                found = words[index + 1]
            } else if word.hasPrefix("--socket=") {
                found = String(word.dropFirst("--socket=".count))
            }
        }
        return found
    }

    /// The ids of the jobs the daemon at `socketPath` lists, or none within `limit`.
    static func jobIDs(socketPath: String, within limit: Duration) async -> [String] {
        await withTaskGroup(of: [String]?.self) { group in
            group.addTask {
                guard let connection = try? await ImageCacheConnection.connect(to: socketPath) else { return [] }
                let listed = try? await connection.downloads()
                await connection.close()
                return listed?.jobs.map(\.job) ?? []
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? []
        }
    }
}
