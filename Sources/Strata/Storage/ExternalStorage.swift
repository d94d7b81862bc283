import Glibc

/// The folder of external-storage files beside a store (`<store>.strata/`).
///
/// A store file is untrusted input: a column of an `externalStorage`
/// attribute holds a file name that someone may have replaced. Only names
/// Strata generates (a canonical uppercase UUID: no `/`, no `..`) are ever
/// opened or removed, always relative to the folder (`openat`/`unlinkat` on
/// the folder's descriptor, which must be a real directory), and never
/// through a symbolic link. Any other name is `STRATA_ERR_CORRUPT`.
///
/// Files are written and synced before the commit that refers to them and
/// removed after the commit that makes them obsolete. A reader whose
/// snapshot still names a removed file retries on a newer snapshot
/// (``SQLiteSession/read(_:_:)``); files orphaned by a process killed between
/// writing a file and committing are swept when a store is opened for writing.
final class ExternalFolder: @unchecked Sendable {
    let path: String

    init(path: String) { self.path = path }

    /// A referenced file that is not in the folder (see ``SQLiteSession/read(_:_:)``).
    struct Missing: Error {
        let name: String
        let entity: String
        let attribute: String
        /// The row that names the file: its root table and key.
        let table: String
        let pk: Int64

        /// What a read reports when the file is really gone (not replaced by a newer commit).
        var error: StrataError {
            StrataError(.io, "external storage file '\(name)' of '\(entity).\(attribute)' is missing from the store's .strata folder",
                        entity: entity, attribute: attribute)
        }
    }

    /// Whether `name` is one Strata generates: a canonical uppercase UUID.
    static func isValidName<C: Collection>(_ name: C) -> Bool where C.Element == UInt8 {
        guard let canonical = UUIDText.canonical(name) else { return false }
        return canonical.utf8.elementsEqual(name)
    }

    static func corruptName(entity: String, attribute: String) -> StrataError {
        StrataError(.corrupt, "the store names an external storage file for '\(entity).\(attribute)' that Strata did not generate "
                    + "(only canonical UUID names inside the store's .strata folder are used); the store file is damaged or was altered",
                    entity: entity, attribute: attribute)
    }

    private func errorText() -> String { String(cString: strerror(errno)) }

    /// Opens the folder itself; a symbolic link or anything but a directory is refused.
    private func openDirectory(create: Bool) throws -> Int32? {
        if create && mkdir(path, 0o755) != 0 && errno != EEXIST {
            throw StrataError(.io, "cannot create external storage folder '\(path)': \(errorText())")
        }
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if fd >= 0 { return fd }
        switch errno {
        case ENOENT where !create: return nil
        case ELOOP, ENOTDIR:
            throw StrataError(.corrupt, "the external storage folder '\(path)' is not a directory (a symbolic link or a file); Strata does not follow it")
        default:
            throw StrataError(.io, "cannot open external storage folder '\(path)': \(errorText())")
        }
    }

    /// Writes a new file and syncs it (the name is new: an existing file is never overwritten).
    func write(_ bytes: [UInt8], name: String) throws {
        guard let dfd = try openDirectory(create: true) else { return }
        defer { close(dfd) }
        let fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw StrataError(.io, "cannot create external storage file '\(path)/\(name)': \(errorText())") }
        defer { close(fd) }
        var offset = 0
        try bytes.withUnsafeBytes { buf in
            guard let base = buf.baseAddress else { return }
            while offset < buf.count {
                let n = Glibc.write(fd, base + offset, buf.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    let reason = errorText()
                    unlinkat(dfd, name, 0)
                    throw StrataError(.io, "cannot write external storage file '\(path)/\(name)': \(reason)")
                }
                offset += n
            }
        }
        if fsync(fd) != 0 {
            unlinkat(dfd, name, 0)
            throw StrataError(.io, "cannot sync external storage file '\(path)/\(name)'")
        }
    }

    /// Makes the folder's entries (new file names) durable.
    func sync() throws {
        guard let dfd = try openDirectory(create: false) else { return }
        defer { close(dfd) }
        if fsync(dfd) != 0 { throw StrataError(.io, "cannot sync external storage folder '\(path)'") }
    }

    /// The contents of the file that the column of `a` names in row `pk`.
    ///
    /// - Throws: `.corrupt` for a name Strata did not generate or a file that is
    ///   not a regular file (a symbolic link is not followed); ``Missing`` when
    ///   the file is not there; `.io` when it cannot be read.
    func read<C: Collection>(_ nameBytes: C, of a: Attribute, pk: Int64) throws -> [UInt8] where C.Element == UInt8 {
        let entity = a.entity.name, attribute = a.name
        guard ExternalFolder.isValidName(nameBytes) else { throw ExternalFolder.corruptName(entity: entity, attribute: attribute) }
        let name = String(decoding: nameBytes, as: UTF8.self)
        func missing() -> Missing { Missing(name: name, entity: entity, attribute: attribute, table: a.entity.root.name, pk: pk) }
        guard let dfd = try openDirectory(create: false) else { throw missing() }
        defer { close(dfd) }
        let fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            switch errno {
            case ENOENT: throw missing()
            case ELOOP:
                throw StrataError(.corrupt, "external storage file '\(path)/\(name)' of '\(entity).\(attribute)' is a symbolic link; Strata does not follow it",
                                  entity: entity, attribute: attribute)
            default:
                throw StrataError(.io, "cannot open external storage file '\(path)/\(name)': \(errorText())", entity: entity, attribute: attribute)
            }
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
            throw StrataError(.corrupt, "external storage file '\(path)/\(name)' of '\(entity).\(attribute)' is not a regular file",
                              entity: entity, attribute: attribute)
        }
        var out: [UInt8] = []
        out.reserveCapacity(Int(st.st_size))
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, 65536) }
            if n < 0 {
                if errno == EINTR { continue }
                throw StrataError(.io, "cannot read external storage file '\(path)/\(name)': \(errorText())", entity: entity, attribute: attribute)
            }
            if n == 0 { break }
            out.append(contentsOf: chunk[0..<n])
        }
        return out
    }

    /// Removes files by name (names already checked with ``isValidName(_:)``); best effort.
    func remove(_ names: [String]) {
        guard !names.isEmpty, let dfd = try? openDirectory(create: false) else { return }
        defer { close(dfd) }
        for name in names where ExternalFolder.isValidName(name.utf8) { unlinkat(dfd, name, 0) }
    }

    /// Whether the folder holds a regular file `name` (a name checked with ``isValidName(_:)``);
    /// a symbolic link is not followed and counts as no file.
    func holds(_ name: String) throws -> Bool {
        guard let dfd = try openDirectory(create: false) else { return false }
        defer { close(dfd) }
        var st = stat()
        guard fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { return false }
            throw StrataError(.io, "cannot read external storage file '\(path)/\(name)': \(errorText())")
        }
        return (st.st_mode & S_IFMT) == S_IFREG
    }

    /// Copies the file `name` (checked with ``isValidName(_:)``) into `destination`'s folder
    /// (created), in chunks, and syncs the copy; false when this folder has no such file.
    ///
    /// - Throws: `.corrupt` for a file that is not a regular file; `.io` when reading or writing fails.
    func copy(_ name: String, to destination: ExternalFolder) throws -> Bool {
        guard let dfd = try openDirectory(create: false) else { return false }
        defer { close(dfd) }
        let fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            if errno == ENOENT { return false }
            throw StrataError(.io, "cannot open external storage file '\(path)/\(name)': \(errorText())")
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
            throw StrataError(.corrupt, "external storage file '\(path)/\(name)' is not a regular file")
        }
        guard let out = try destination.openDirectory(create: true) else { return false }
        defer { close(out) }
        let wfd = openat(out, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard wfd >= 0 else { throw StrataError(.io, "cannot create '\(destination.path)/\(name)': \(errorText())") }
        defer { close(wfd) }
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, 65536) }
            if n < 0 {
                if errno == EINTR { continue }
                throw StrataError(.io, "cannot read external storage file '\(path)/\(name)': \(errorText())")
            }
            if n == 0 { break }
            var offset = 0
            while offset < n {
                let w = chunk.withUnsafeBytes { Glibc.write(wfd, $0.baseAddress! + offset, n - offset) }
                if w < 0 {
                    if errno == EINTR { continue }
                    throw StrataError(.io, "cannot write '\(destination.path)/\(name)': \(errorText())")
                }
                offset += w
            }
        }
        if fsync(wfd) != 0 { throw StrataError(.io, "cannot sync '\(destination.path)/\(name)'") }
        return true
    }

    /// Removes the folder with every file Strata could have generated in it (best effort; a
    /// folder holding anything else stays).
    func removeFolder() {
        remove((try? generatedNames()) ?? [])
        rmdir(path)
    }

    /// The names in the folder that Strata could have generated (anything else is left alone).
    func generatedNames() throws -> [String] {
        guard let dfd = try openDirectory(create: false) else { return [] }
        guard let dir = fdopendir(dfd) else {
            close(dfd)
            throw StrataError(.io, "cannot list external storage folder '\(path)': \(errorText())")
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw -> String in
                let bytes = raw.bindMemory(to: UInt8.self)
                let n = bytes.firstIndex(of: 0) ?? bytes.count
                // Decoded from a zero-padded copy: String's word-at-a-time scan may read past the
                // name's end, where readdir leaves the entry's bytes uninitialised.
                var padded = [UInt8](repeating: 0, count: n + 16)
                padded.withUnsafeMutableBufferPointer { _ = $0.initialize(from: bytes[0..<n]) }
                return String(decoding: padded[0..<n], as: UTF8.self)
            }
            if ExternalFolder.isValidName(name.utf8) { names.append(name) }
        }
        return names
    }
}
