import Strata

/// Shows a migration's progress events (docs/JSON.md §7): on a terminal one bar redrawn in
/// place with \r (a line kept per finished stage); otherwise one plain line per event,
/// `stage: step [entity] [done/total]`.
final class ProgressReporter: @unchecked Sendable {
    private let terminal: Bool
    private let stageCount: Int
    private var finished = 0
    private var current = ""
    private var steps = 0
    private static let barWidth = 24

    init(stageCount: Int, terminal: Bool) {
        self.stageCount = max(stageCount, 1)
        self.terminal = terminal
    }

    /// The handler the configuration calls with each event.
    var handler: MigrationProgressHandler { { [self] event in self.report(event) } }

    func report(_ event: String) {
        guard let e = try? JSONValue.parse(event) else { return }
        let stage = TextTable.cell(e["stage"]), step = TextTable.cell(e["step"])
        var what = step
        if let entity = e["entity"] { what += " " + TextTable.cell(entity) }
        var fraction = 0.0
        if case .number(let d)? = e["done"], case .number(let t)? = e["total"], let done = Double(d), let total = Double(t) {
            what += " \(d)/\(t)"
            if total > 0 { fraction = min(max(done / total, 0), 1) }
        }
        guard terminal else {
            Output.write("\(stage): \(what)\n")
            return
        }
        if stage != current { current = stage; steps = 0 }
        if step == "commit" {
            finished += 1
            Output.write("\r\u{1B}[K✓ \(stage) (\(steps) step\(steps == 1 ? "" : "s"))\n")
            return
        }
        steps += 1
        let overall = (Double(finished) + fraction) / Double(stageCount)
        let filled = Int(overall * Double(Self.barWidth))
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: Self.barWidth - filled)
        Output.write("\r\u{1B}[K[\(bar)] \(finished + 1)/\(stageCount) \(stage): \(what)")
    }
}
