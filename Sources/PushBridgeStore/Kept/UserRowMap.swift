/// Values by user row id, for what a connection keeps per user row: the badge log's counters, a
/// kept group's row positions. SQLite gives row ids in order, so they are mostly close together:
/// ids from `first` up to a bound that grows with the entries index an array (a group send sets or
/// finds 100,000 of them without hashing); any other id is in a dictionary.
package struct UserRowMap {
    /// The id the array's first slot stands for.
    private var first: Int64 = 0
    private var dense: [Int] = []
    private var sparse: [Int64: Int] = [:]
    private static let none = Int.min

    /// An empty map, its array starting at id 0 (ids added one by one).
    package init() {}

    /// Each row's position, by its key: the array starts at the smallest key (the rows' ids may all
    /// be far from 0).
    /// - Parameter rows: rows in order; those without a key are left out.
    package init(positionsOf rows: [StoredReceiver]) {
        first = rows.lazy.compactMap { $0.key?.rawValue }.min() ?? 0
        for (position, row) in rows.enumerated() { if let key = row.key { set(position, for: key.rawValue) } }
    }

    /// How far `key` is past `first`, when it is not before it (`nil` also when the distance
    /// does not fit in an `Int64`).
    private func slot(of key: Int64) -> Int64? {
        let (distance, overflow) = key.subtractingReportingOverflow(first)
        return key >= first && !overflow ? distance : nil
    }

    /// A row's value, if set.
    package subscript(key: Int64) -> Int? {
        if let slot = slot(of: key), slot < Int64(dense.count) {
            let value = dense[Int(slot)]
            return value == Self.none ? nil : value
        }
        return sparse.isEmpty ? nil : sparse[key]
    }

    /// Sets a row's value.
    package mutating func set(_ value: Int, for key: Int64) {
        guard let slot = slot(of: key), slot < Int64(max(65_536, 4 * (dense.count + sparse.count))) else {
            sparse[key] = value
            return
        }
        if slot >= Int64(dense.count) {
            let grown = max(Int(slot) + 1, dense.count * 2)
            dense += repeatElement(Self.none, count: grown - dense.count)
            for (moved, counter) in sparse {
                guard let movedSlot = self.slot(of: moved), movedSlot < Int64(grown) else { continue }
                dense[Int(movedSlot)] = counter
                sparse[moved] = nil
            }
        }
        dense[Int(slot)] = value
    }

    /// Every row set and its value, by row id.
    package func sorted() -> [(key: Int64, value: Int)] {
        var all: [(key: Int64, value: Int)] = []
        for (slot, value) in dense.enumerated() where value != Self.none { all.append((first + Int64(slot), value)) }
        guard !sparse.isEmpty else { return all }
        all += sparse.map { ($0.key, $0.value) }
        return all.sorted { $0.key < $1.key }
    }
}
