import Glibc

/// PostgreSQL's client library, loaded on first use with `dlopen` (Debian's
/// `libpq5`, `libpq.so.5`): a program that opens only SQLite stores never
/// needs it installed, and libstrata.so does not link it. Only the functions
/// the PostgreSQL store calls are bound; each is checked when the library loads.
struct LibPQ: @unchecked Sendable {
    typealias Conn = OpaquePointer
    typealias Result = OpaquePointer

    let connectdb: @convention(c) (UnsafePointer<CChar>?) -> Conn?
    let status: @convention(c) (Conn?) -> Int32
    let errorMessage: @convention(c) (Conn?) -> UnsafeMutablePointer<CChar>?
    let finish: @convention(c) (Conn?) -> Void
    let reset: @convention(c) (Conn?) -> Void
    let exec: @convention(c) (Conn?, UnsafePointer<CChar>?) -> Result?
    /// Sends statements without waiting (1 when sent); their results come from ``getResult``, then nil.
    let sendQuery: @convention(c) (Conn?, UnsafePointer<CChar>?) -> Int32
    let getResult: @convention(c) (Conn?) -> Result?
    let execParams: @convention(c) (Conn?, UnsafePointer<CChar>?, Int32, UnsafePointer<UInt32>?,
                                    UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?, Int32) -> Result?
    let prepare: @convention(c) (Conn?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, Int32, UnsafePointer<UInt32>?) -> Result?
    let execPrepared: @convention(c) (Conn?, UnsafePointer<CChar>?, Int32, UnsafePointer<UnsafePointer<CChar>?>?,
                                      UnsafePointer<Int32>?, UnsafePointer<Int32>?, Int32) -> Result?
    let resultStatus: @convention(c) (Result?) -> Int32
    let resultErrorField: @convention(c) (Result?, Int32) -> UnsafeMutablePointer<CChar>?
    let resultErrorMessage: @convention(c) (Result?) -> UnsafeMutablePointer<CChar>?
    let clear: @convention(c) (Result?) -> Void
    let ntuples: @convention(c) (Result?) -> Int32
    let nfields: @convention(c) (Result?) -> Int32
    let ftype: @convention(c) (Result?, Int32) -> UInt32
    let getvalue: @convention(c) (Result?, Int32, Int32) -> UnsafeMutablePointer<CChar>?
    let getlength: @convention(c) (Result?, Int32, Int32) -> Int32
    let getisnull: @convention(c) (Result?, Int32, Int32) -> Int32
    /// The number of rows a command changed, as text ("" for a command that changes none).
    let cmdTuples: @convention(c) (Result?) -> UnsafeMutablePointer<CChar>?
    let transactionStatus: @convention(c) (Conn?) -> Int32
    let setNoticeProcessor: @convention(c) (Conn?, (@convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?) -> Void)?,
                                            UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?
    let connectionUsedPassword: @convention(c) (Conn?) -> Int32
    let connectionNeedsPassword: @convention(c) (Conn?) -> Int32

    // ConnStatusType, ExecStatusType, PGTransactionStatusType and PG_DIAG_* of libpq-fe.h.
    static let connectionOK: Int32 = 0
    static let commandOK: Int32 = 1, tuplesOK: Int32 = 2, singleTuple: Int32 = 9
    static let transactionIdle: Int32 = 0, transactionInError: Int32 = 3
    static let diagSQLState = Int32(UInt8(ascii: "C")), diagMessage = Int32(UInt8(ascii: "M")), diagDetail = Int32(UInt8(ascii: "D"))
    static let diagConstraint = Int32(UInt8(ascii: "n")), diagTable = Int32(UInt8(ascii: "t")), diagColumn = Int32(UInt8(ascii: "c"))

    /// The names tried, newest ABI first (libpq has kept soname 5 since PostgreSQL 8.2).
    static let names = ["libpq.so.5", "libpq.so"]

    /// The library, loaded once per process; the error says what is missing.
    static func shared() throws -> LibPQ {
        switch loaded {
        case .success(let pq): return pq
        case .failure(let e): throw e
        }
    }

    private static let loaded = load(names)

    /// Loads the first of `names` that the dynamic linker finds, and binds every function.
    static func load(_ names: [String]) -> Swift.Result<LibPQ, StrataError> {
        var handle: UnsafeMutableRawPointer?
        for name in names {
            // Lazily: libpq's own libraries (Kerberos's among them) bind a function when it is first
            // called instead of every one at once; the functions Strata calls are checked below.
            handle = dlopen(name, RTLD_LAZY | RTLD_LOCAL)
            if handle != nil { break }
        }
        guard let handle else {
            return .failure(StrataError(.io, "a PostgreSQL store needs PostgreSQL's client library libpq (libpq.so.5), which is not installed: "
                                        + "install it (Debian: apt-get install libpq5) or open a store file"))
        }
        var missing: [String] = []
        func bind<T>(_ symbol: String, _ type: T.Type) -> T {
            guard let p = dlsym(handle, symbol) else {
                missing.append(symbol)
                return unsafeBitCast(dlsym(handle, "PQlibVersion") ?? UnsafeMutableRawPointer(bitPattern: 1)!, to: type)
            }
            return unsafeBitCast(p, to: type)
        }
        let pq = LibPQ(
            connectdb: bind("PQconnectdb", (@convention(c) (UnsafePointer<CChar>?) -> Conn?).self),
            status: bind("PQstatus", (@convention(c) (Conn?) -> Int32).self),
            errorMessage: bind("PQerrorMessage", (@convention(c) (Conn?) -> UnsafeMutablePointer<CChar>?).self),
            finish: bind("PQfinish", (@convention(c) (Conn?) -> Void).self),
            reset: bind("PQreset", (@convention(c) (Conn?) -> Void).self),
            exec: bind("PQexec", (@convention(c) (Conn?, UnsafePointer<CChar>?) -> Result?).self),
            sendQuery: bind("PQsendQuery", (@convention(c) (Conn?, UnsafePointer<CChar>?) -> Int32).self),
            getResult: bind("PQgetResult", (@convention(c) (Conn?) -> Result?).self),
            execParams: bind("PQexecParams", (@convention(c) (Conn?, UnsafePointer<CChar>?, Int32, UnsafePointer<UInt32>?,
                                                              UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?,
                                                              UnsafePointer<Int32>?, Int32) -> Result?).self),
            prepare: bind("PQprepare", (@convention(c) (Conn?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, Int32, UnsafePointer<UInt32>?) -> Result?).self),
            execPrepared: bind("PQexecPrepared", (@convention(c) (Conn?, UnsafePointer<CChar>?, Int32, UnsafePointer<UnsafePointer<CChar>?>?,
                                                                  UnsafePointer<Int32>?, UnsafePointer<Int32>?, Int32) -> Result?).self),
            resultStatus: bind("PQresultStatus", (@convention(c) (Result?) -> Int32).self),
            resultErrorField: bind("PQresultErrorField", (@convention(c) (Result?, Int32) -> UnsafeMutablePointer<CChar>?).self),
            resultErrorMessage: bind("PQresultErrorMessage", (@convention(c) (Result?) -> UnsafeMutablePointer<CChar>?).self),
            clear: bind("PQclear", (@convention(c) (Result?) -> Void).self),
            ntuples: bind("PQntuples", (@convention(c) (Result?) -> Int32).self),
            nfields: bind("PQnfields", (@convention(c) (Result?) -> Int32).self),
            ftype: bind("PQftype", (@convention(c) (Result?, Int32) -> UInt32).self),
            getvalue: bind("PQgetvalue", (@convention(c) (Result?, Int32, Int32) -> UnsafeMutablePointer<CChar>?).self),
            getlength: bind("PQgetlength", (@convention(c) (Result?, Int32, Int32) -> Int32).self),
            getisnull: bind("PQgetisnull", (@convention(c) (Result?, Int32, Int32) -> Int32).self),
            cmdTuples: bind("PQcmdTuples", (@convention(c) (Result?) -> UnsafeMutablePointer<CChar>?).self),
            transactionStatus: bind("PQtransactionStatus", (@convention(c) (Conn?) -> Int32).self),
            setNoticeProcessor: bind("PQsetNoticeProcessor", (@convention(c) (Conn?, (@convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?) -> Void)?,
                                                                               UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?).self),
            connectionUsedPassword: bind("PQconnectionUsedPassword", (@convention(c) (Conn?) -> Int32).self),
            connectionNeedsPassword: bind("PQconnectionNeedsPassword", (@convention(c) (Conn?) -> Int32).self))
        guard missing.isEmpty else {
            dlclose(handle)
            return .failure(StrataError(.io, "the installed libpq lacks \(missing.joined(separator: ", ")): Strata's PostgreSQL store needs libpq 10 or newer"))
        }
        return .success(pq)
    }
}
