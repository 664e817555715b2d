/// A value kept behind one shared reference: copying it is one retain, however many strings and
/// collections it holds, and the first change to a copy that is shared copies the value first.
/// `UserState` and `PushMessage` keep their fields in one.
@usableFromInline struct CopyOnWrite<Value: Hashable & Sendable>: Hashable, Sendable {
    /// The shared storage.
    @usableFromInline final class Box: @unchecked Sendable {
        // Unchecked: the value changes only through `CopyOnWrite.value`'s `_modify`, which first
        // makes this box the only reference to it.
        @exclusivity(unchecked) @usableFromInline var value: Value
        @inlinable init(_ value: Value) { self.value = value }
    }

    @usableFromInline var box: Box

    @inlinable init(_ value: Value) { box = Box(value) }

    /// The value: read in place; changed in place when this copy holds the only reference, else
    /// in a copy of its own.
    @inlinable var value: Value {
        _read { yield box.value }
        _modify {
            if !isKnownUniquelyReferenced(&box) { box = Box(box.value) }
            yield &box.value
        }
    }

    @inlinable static func == (lhs: CopyOnWrite, rhs: CopyOnWrite) -> Bool { lhs.box === rhs.box || lhs.box.value == rhs.box.value }

    @inlinable func hash(into hasher: inout Hasher) { box.value.hash(into: &hasher) }
}
