/// What is wrong with bytes that a ``RecordReader`` was asked to read: the format's owner names
/// the record (a message id, a table's column) when it reports it.
package struct RecordDamage: Error, Equatable, CustomStringConvertible {
    /// What was found, in words: "it ends early", "a count of 7".
    package var what: String
    /// Where in the bytes it was found.
    package var offset: Int

    /// - Parameters:
    ///   - what: what was found, in words.
    ///   - offset: where in the bytes.
    @inlinable
    package init(_ what: String, at offset: Int) {
        self.what = what
        self.offset = offset
    }

    package var description: String { "\(what) (at byte \(offset))" }
}
