/// How coarse a JPEG's quantization is: the steps its DQT segments declare, summed per table
/// slot. What leaving out the last bit of a coefficient costs is at most one step, so the
/// steps bound what a thumbnail loses when it does not decode the scans that bring that bit
/// (`JPEGScanSurvey.droppableTail`).
///
/// The yardstick is the luminance table of the standard (ITU-T T.81, Annex K, table K.1),
/// which is libjpeg's table at quality 50: its other qualities scale every step by one
/// factor, so the sum of a table's steps beside the scaled table's sum says how finely a file
/// was quantized, whatever encoder made it.
struct JPEGQuantization {
    /// Per table slot (0…3), the sum of its 64 steps; where a body defines a slot more than
    /// once, the coarsest definition (libjpeg latches a table when a component's first scan
    /// starts, so which one it used is not known here). nil: never defined; `Int.max`: a
    /// definition cut short.
    private(set) var stepSums: [Int?] = [nil, nil, nil, nil]

    /// The luminance table of T.81 Annex K.1, in natural (row by row) order.
    static let standardLuminance: [Int] = [
        16, 11, 10, 16, 24, 40, 51, 61,
        12, 12, 14, 19, 26, 58, 60, 55,
        14, 13, 16, 24, 40, 57, 69, 56,
        14, 17, 22, 29, 51, 87, 80, 62,
        18, 22, 37, 56, 68, 109, 103, 77,
        24, 35, 55, 64, 81, 104, 113, 92,
        49, 64, 78, 87, 103, 121, 120, 101,
        72, 92, 95, 98, 112, 100, 103, 99,
    ]

    /// The sum of the luminance steps libjpeg writes at quality 75 (its default, and the
    /// coarsest a photo site or camera usually writes): each standard step halved, rounded,
    /// kept within 1…255, as `jpeg_quality_scaling` and `jpeg_add_quant_table` make them.
    static let quality75LuminanceSum = standardLuminance.map { min(255, max(1, ($0 * 50 + 50) / 100)) }.reduce(0, +)

    /// Reads one DQT segment's payload: one or more tables, each a byte of precision (high
    /// nibble: 0 for 8-bit steps, anything else 16-bit, as libjpeg reads it) and slot (low
    /// nibble), then 64 steps. A slot past 3 ends the reading (libjpeg refuses the file); a
    /// table the payload cuts short, which libjpeg fills with steps of 1, marks its slot
    /// unknown (`Int.max`), so nothing is left out on its account.
    mutating func read(_ payload: ByteReader) {
        var offset = 0
        while let spec = payload.u8(offset) {
            let (sixteenBit, slot) = (spec >> 4 != 0, Int(spec & 15))
            let stepBytes = sixteenBit ? 2 : 1
            guard slot < stepSums.count else { return }
            guard payload.has(offset + 1, 64 * stepBytes) else {
                stepSums[slot] = .max
                return
            }
            var sum = 0
            for index in 0..<64 {
                let at = offset + 1 + index * stepBytes
                sum += (sixteenBit ? payload.u16be(at) : payload.u8(at).map(Int.init)) ?? 0
            }
            stepSums[slot] = max(stepSums[slot] ?? 0, sum)
            offset += 1 + 64 * stepBytes
        }
    }

    /// Whether table `slot` was defined and is no coarser than libjpeg's luminance table at
    /// quality 75 (its steps' sum at most that table's): where a 512-px thumbnail decoded at
    /// 1/2 without the luma's last bit was measured at most 0.004 SSIM from one with it
    /// (docs/benchmarks.md, "The luma's last bit at 1/2").
    func isNoCoarserThanQuality75(slot: Int) -> Bool {
        guard slot >= 0, slot < stepSums.count, let sum = stepSums[slot] else { return false }
        return sum <= Self.quality75LuminanceSum
    }
}
