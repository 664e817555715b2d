import HTTPTypes
import PushBridgeFacade

/// New ids a request may take (a vendor's new group id), made before its edit reads: the edit reads
/// whether each is taken, and takes the first that is free. Eight random ids are never all taken.
package struct CandidateIDs: Sendable {
    /// The ids, in the order they are tried.
    package let ids: [String]

    /// - Parameter make: makes one new id (random).
    package init(_ make: () -> String) { ids = (0..<8).map { _ in make() } }

    /// The first of the ids that no group has.
    /// - Throws: `ServiceError` (500) in the case nobody will see, every id taken.
    package func first(freeIn edit: StateEdit) throws -> String {
        guard let id = try ids.first(where: { try !edit.groupExists($0) }) else {
            throw ServiceError(.internalServerError, code: "no-free-id", pointer: "", expected: "a new group id no group has", found: ids.joined(separator: ","))
        }
        return id
    }
}
