/// The transforms of the last few embedded ICC profiles, kept by the profile's bytes, so that
/// pictures from the same kind of camera share one.
///
/// Why: building a transform parses the profile and precomputes LittleCMS' optimised
/// pipeline, ≈ 4 ms for a Display P3 or Adobe RGB profile, as much as the rest of a 256-px
/// thumbnail's colour management (docs/benchmarks.md, "Colour management cost"). Phones embed
/// the same few profiles byte for byte, so a handful of entries serves a whole grid. Also kept:
/// that a profile needs no transform (sRGB already, or unusable), so the most common embedded
/// profile, "sRGB IEC61966-2.1", is not even parsed again.
///
/// Bounds: `capacity` entries, least recently used first out; only profiles of at most
/// `maxProfileBytes`, and only matrix/curve transforms (a few KiB of tables each; a print
/// profile's CMYK table is built afresh each time, counted by `DecodeCost`). A profile from
/// outside can only ever take one entry, and evicts the oldest.
final class ColourTransformCache: Sendable {
    /// The daemon's one cache.
    static let shared = ColourTransformCache(capacity: 8)

    /// Largest profile kept: RGB matrix/curve profiles are 0.5–4 KiB.
    static let maxProfileBytes = 64 << 10

    private struct Entry {
        let profile: [UInt8]
        let hash: Int
        let layout: ColourTransform.Layout
        /// nil: the profile needs no transform.
        let transform: ColourTransform?
    }

    private let capacity: Int
    /// Most recently used last.
    private let entries = LockedState<[Entry]>([])

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// The transform from `profile` to sRGB for `layout`, built once and then kept (see the
    /// type's comment); nil when the pixels are to be taken as they are.
    func transform(profile: [UInt8], layout: ColourTransform.Layout) -> ColourTransform? {
        guard profile.count <= Self.maxProfileBytes else {
            return ColourTransform(from: .icc(profile), layout: layout)
        }
        let hash = profile.hashValue
        let hit: Entry?? = entries.withLock { entries in
            guard let index = entries.firstIndex(where: { $0.hash == hash && $0.layout == layout && $0.profile == profile })
            else { return nil }
            let entry = entries.remove(at: index)
            entries.append(entry)
            return .some(entry)
        }
        if let hit { return hit?.transform }
        // Built outside the lock: two threads meeting a new profile at once may both build it.
        let transform = ColourTransform(from: .icc(profile), layout: layout)
        if transform?.isMatrixShaper ?? true {
            let entry = Entry(profile: profile, hash: hash, layout: layout, transform: transform)
            entries.withLock { entries in
                guard !entries.contains(where: { $0.hash == hash && $0.layout == layout && $0.profile == profile }) else { return }
                if entries.count == capacity { entries.removeFirst() }
                entries.append(entry)
            }
        }
        return transform
    }

    /// How many profiles are kept now (tests).
    var count: Int { entries.withLock { $0.count } }
}
