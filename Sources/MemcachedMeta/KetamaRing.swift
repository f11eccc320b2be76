/// Ketama consistent hashing: which node holds a key, so that adding or removing a node moves
/// only that node's share of the keys (about 1/N) and every host of a fleet, given the same
/// server list, picks the same node for a key.
///
/// As libketama defines it: each node gets 160 points on a 32-bit circle, four from each of
/// 40 MD5 digests of `"host:port-i"` (i = 0…39; each digest's bytes 4h…4h+3, little-endian,
/// are point h); a key's position is the first four bytes of its MD5, little-endian, and its
/// node is the owner of the first point at or after it, wrapping around. The order of the
/// configured list does not matter.
public struct KetamaRing: Sendable {
    /// Points per node (40 digests × 4).
    public static let pointsPerNode = 160

    private let points: [(position: UInt32, node: Int)]

    /// A ring over `nodes` (each `"host:port"`); indexes in answers are into this array.
    public init(nodes: [String]) {
        var points: [(position: UInt32, node: Int)] = []
        points.reserveCapacity(nodes.count * Self.pointsPerNode)
        for (index, name) in nodes.enumerated() {
            for i in 0..<(Self.pointsPerNode / 4) {
                let digest = MD5.digest(Array("\(name)-\(i)".utf8))
                for h in 0..<4 { points.append((Self.word(digest, at: h * 4), index)) }
            }
        }
        // Ties (vanishingly rare) broken by node name, so every host orders them alike.
        self.points = points.sorted {
            $0.position != $1.position ? $0.position < $1.position : nodes[$0.node] < nodes[$1.node]
        }
    }

    /// The node for `key` (its bytes as sent to the server); nil when the ring is empty.
    public func node(for key: some Collection<UInt8>) -> Int? {
        guard !points.isEmpty else { return nil }
        let position = Self.word(MD5.digest(key), at: 0)
        var low = 0, high = points.count
        while low < high {
            let middle = (low + high) / 2
            if points[middle].position < position { low = middle + 1 } else { high = middle }
        }
        return points[low == points.count ? 0 : low].node
    }

    private static func word(_ digest: [UInt8], at offset: Int) -> UInt32 {
        UInt32(digest[offset]) | UInt32(digest[offset + 1]) << 8 | UInt32(digest[offset + 2]) << 16 | UInt32(digest[offset + 3]) << 24
    }
}
