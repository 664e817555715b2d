import PushBridgeCore

extension MappingCatalog {
    /// What a migration from one dialect to another carries, field by field: every canonical field
    /// the source dialect can set, how each side expresses it, and the verdict (`carried`, `lossy`,
    /// `LOST`). Plain text no wider than `width` columns (`pushbridge mappings --from A --to B`).
    /// - Parameters:
    ///   - source: the dialect migrated from.
    ///   - target: the dialect migrated to.
    ///   - width: the widest line, at least 80.
    public func pairView(from source: String, to target: String, width: Int = 100) -> String {
        let width = max(width, 80)
        let fieldWidth = 28
        let verdictWidth = 7
        let cellWidth = (width - fieldWidth - verdictWidth - 6) / 2
        func fit(_ text: String, _ columns: Int) -> String {
            let shown = text.count > columns ? String(text.prefix(columns - 1)) + "…" : text
            return shown + String(repeating: " ", count: columns - shown.count)
        }
        func describe(_ cell: Cell) -> String {
            cell.fidelity == .none ? "none" : cell.fidelity.rawValue + " " + cell.shownInputs.joined(separator: ", ")
        }
        var rows: [String] = []
        var counts: [String: Int] = [:]
        for field in CanonicalField.allCases {
            let from = cell(field, in: source)
            guard from.fidelity != .none else { continue }
            let to = cell(field, in: target)
            let verdict = to.fidelity == .none ? "LOST" : min(from.fidelity, to.fidelity) == .lossy ? "lossy" : "carried"
            counts[verdict, default: 0] += 1
            let line = fit(field.rawValue, fieldWidth) + "  " + fit(describe(from), cellWidth) + "  " + fit(describe(to), cellWidth) + "  " + verdict
            rows.append(String(line.reversed().drop { $0 == " " }.reversed()))
        }
        let header = fit("canonical field", fieldWidth) + "  " + fit(source, cellWidth) + "  " + fit(target, cellWidth) + "  verdict"
        let summary = "\(source) → \(target): \(rows.count) fields the source sets; \(counts["carried", default: 0]) carried, "
            + "\(counts["lossy", default: 0]) lossy, \(counts["LOST", default: 0]) lost"
        return ([summary, "", header, String(repeating: "-", count: min(width, header.count))] + rows).joined(separator: "\n") + "\n"
    }
}
