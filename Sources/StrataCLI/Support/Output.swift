import Glibc

/// Where the command writes: stdout for results, stderr for messages, and whether
/// each is a terminal (a table and a progress bar there; JSON and plain lines when piped).
enum Output {
    /// Whether standard output is a terminal.
    static var isTerminal: Bool { isatty(STDOUT_FILENO) != 0 }
    /// Whether standard error is a terminal.
    static var errorIsTerminal: Bool { isatty(STDERR_FILENO) != 0 }

    /// A failure's message on stderr, as `strata: <message>`.
    static func error(_ message: String) { errorLine("strata: " + message) }

    /// One line on stderr.
    static func errorLine(_ text: String) { errorText(text + "\n") }

    /// Text on stderr, unbuffered (a progress bar redraws itself with \r).
    static func errorText(_ text: String) {
        fflush(stdout)
        fputs(text, stderr)
        fflush(stderr)
    }

    /// Text on stdout, flushed (progress lines interleave with other output in order).
    static func write(_ text: String) {
        fputs(text, stdout)
        fflush(stdout)
    }
}

/// A failure the command itself finds (no store there, a plan it cannot run): exit 1 with
/// the message, as for the library's errors.
struct CommandFailure: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
