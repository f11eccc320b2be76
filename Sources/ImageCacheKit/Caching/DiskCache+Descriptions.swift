import Foundation
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

extension DiskCache {
    /// Whether entries written now keep their description in an extended attribute of their
    /// content file (otherwise in a `.m` file beside it).
    var descriptionsInAttributes: Bool { attributesKept.load(ordering: .relaxed) }

    /// Decides, once per open, where this cache keeps entries' descriptions: sets an
    /// attribute on a file under `tmp/` and keeps attributes unless the file system refuses
    /// them (ENOTSUP, EOPNOTSUPP). Logged either way. A probe that cannot create its file
    /// (a read-only folder) decides nothing: attributes are tried, and the first refusal
    /// turns them off (`describe`).
    func describeEntriesAsProbed() {
        let probe = tempDirectory + "/attribute-probe"
        var kept = true
        var reason: String?
        do throws(CacheFileSystemError) {
            try fileSystem.writeNewFile(atPath: probe, contents: Data())
            defer { try? fileSystem.removeFile(atPath: probe) }
            do throws(CacheFileSystemError) {
                try fileSystem.setAttribute(EntryDescription.attributeName, to: Data("probe".utf8), atPath: probe)
            } catch {
                if Self.refusesAttributes(error.code) {
                    kept = false
                } else {
                    reason = "\(error)"
                }
            }
        } catch {
            reason = "\(error)"
        }
        attributesKept.store(kept, ordering: .relaxed)
        if kept {
            var metadata: Logger.Metadata = ["folder": "\(directory)"]
            if let reason { metadata["probe"] = "\(reason)" }
            logger.info("cache entries described in an extended attribute of their content file", metadata: metadata)
        } else {
            logger.notice("cache entries described in a .m file beside their content file: the file system keeps no user extended attributes",
                          metadata: ["folder": "\(directory)"])
        }
    }

    /// Writes the temp file of a placement (created when `exclusive`, else an empty spare
    /// truncated) and gives it its description, when this cache keeps them in attributes,
    /// through the descriptor that wrote it. Returns the description to write as a file at
    /// publication instead (nil: the attribute holds it), which is the case where attributes
    /// are off or the file system refuses this one (too big for it, or no attributes at all:
    /// then they are turned off for the entries after it).
    ///
    /// On the temp file, before the rename, rather than on the placed file in `publish`: the
    /// content file is then never in place without its description (one rename makes both
    /// visible, and a rebuild finds a placed file complete), and the attribute costs
    /// microseconds: on a churned ext4, `open` + `fsetxattr` + `close` of a new 200-byte value
    /// on a new file took 9–10 µs at the median and 12–14 µs at the 99th percentile (through
    /// the writing descriptor, the open and close are saved too), where creating and writing
    /// a `.m` file took 17–600 µs at the median and up to 0.7 ms at the 99th (measured). That
    /// is affordable on the path a shared-tier hit's answer waits for, and it leaves the
    /// publisher no file to create.
    func writeDescribed(_ tempFile: String, contents: Data, exclusive: Bool,
                        description: Data) throws(CacheFileSystemError) -> Data? {
        let attribute = descriptionsInAttributes ? (name: EntryDescription.attributeName, value: description) : nil
        guard let error = try fileSystem.writeFile(atPath: tempFile, contents: contents, exclusive: exclusive,
                                                   attribute: attribute) else { return attribute == nil ? description : nil }
        if Self.refusesAttributes(error.code) {
            if attributesKept.exchange(false, ordering: .relaxed) {
                logger.notice("cache entries now described in a .m file beside their content file: the file system refused an extended attribute",
                              metadata: ["folder": "\(directory)", "error": "\(error)"])
            }
            return description
        }
        if Self.refusesThisAttribute(error.code) { return description }
        throw error
    }

    /// The description of the content file `name` in `folder`, from its attribute or else
    /// from its `.m` file (when `names`, the folder's listing, has one), with the bytes it
    /// takes; nil when it has none that decodes. A `.m` file beside an attribute that decodes
    /// is stale (the attribute came with the content file's last rename) and is removed.
    func readDescription(of name: String, in folder: String, names: Set<String>) -> (description: EntryDescription, stored: Int)? {
        let contentFile = folder + "/" + name
        let descriptionFile = contentFile + EntryDescription.fileSuffix
        let hasFile = names.contains(name + EntryDescription.fileSuffix)
        do throws(CacheFileSystemError) {
            let value = try fileSystem.attribute(EntryDescription.attributeName, atPath: contentFile)
            guard let description = EntryDescription(decoding: value) else { return nil }
            if hasFile { try? fileSystem.removeFile(atPath: descriptionFile) }
            return (description, value.count)
        } catch where error.code == ENODATA || Self.refusesAttributes(error.code) {
            guard hasFile, let value = try? fileSystem.readFile(atPath: descriptionFile),
                  let description = EntryDescription(decoding: value) else { return nil }
            return (description, value.count)
        } catch {
            return nil
        }
    }

    /// The file system keeps no user extended attributes (tmpfs before Linux 6.6, some FUSE
    /// and NFS mounts).
    static func refusesAttributes(_ code: Int32) -> Bool {
        code == ENOTSUP || code == EOPNOTSUPP
    }

    /// The file system keeps attributes, but not one this big (ext4 without `ea_inode`:
    /// ENOSPC past a block; E2BIG past the kernel's limit).
    static func refusesThisAttribute(_ code: Int32) -> Bool {
        code == E2BIG || code == ENOSPC || code == ERANGE
    }
}
