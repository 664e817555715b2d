import Synchronization

/// New ids a write may take (a vendor's new group id), made outside the write: the write's body
/// may run more than once (a store over the network runs it again after each statement it sends),
/// and each run must take the same ids. The `n`th id is made the first time it is asked for and is
/// the same after.
package final class CandidateIDs: Sendable {
    private let make: @Sendable () -> String
    private let made = Mutex<[String]>([])

    /// - Parameter make: makes one new id (random).
    package init(_ make: @escaping @Sendable () -> String) { self.make = make }

    /// The `index`th id.
    private subscript(index: Int) -> String {
        made.withLock { made in
            while made.count <= index { made.append(make()) }
            return made[index]
        }
    }

    /// The first of these ids that `isFree` accepts.
    package func first(where isFree: (String) throws -> Bool) rethrows -> String {
        var index = 0
        while !(try isFree(self[index])) { index += 1 }
        return self[index]
    }
}
