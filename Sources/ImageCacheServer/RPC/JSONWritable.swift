/// A value that writes its own JSON text into a line's buffer (`JSONWriter`), within a bound
/// it states beforehand: what the daemon's hottest lines (a show's answer, a slot's
/// notifications) use instead of Foundation's encoder.
protocol JSONWritable {
    /// Writes the value as one JSON value (no raw newline).
    func writeJSON(to out: inout JSONWriter)
    /// Most bytes `writeJSON` writes: the buffer is sized once.
    var jsonBound: Int { get }
}
