/*
 * strata.hpp — C++17 RAII over strata.h, header-only.
 *
 * Each handle of the C API has one owner here, freed by its destructor:
 *
 *   strata::Config    strata_config     (strata_config_free)
 *   strata::Store     strata_container  (strata_close)
 *   strata::Context   strata_context    (strata_context_free)
 *   strata::Cursor    strata_cursor     (strata_cursor_free)
 *   strata::Prepared  strata_prepared   (strata_prepared_free)
 *   strata::Observer  strata_observer   (strata_observer_remove)
 *   strata::String    a char * the library returned (strata_free)
 *
 * All are move-only: copying a unique owner would free twice. A moved-from
 * object owns nothing: a moved-from String is empty (""), and using a
 * moved-from (or closed) Config, Store, Context, Cursor or Prepared throws
 * strata::Error with status STRATA_ERR_MISUSE (as the C calls answer a NULL
 * handle). JSON stays text
 * (std::string_view in, strata::String out): parse it with the JSON library
 * the program already uses.
 *
 *   strata::Store store = strata::Store::open("trips.store", strata::Config(R"({"schema": …})"));
 *   strata::Context ctx = store.context();
 *   strata::String id = ctx.insert("Trip", R"({"name": "Paris", …})");
 *   ctx.save();
 *   strata::String trips = ctx.fetch(R"({"entity": "Trip", "predicate": "$0.name == n",
 *                                        "bindings": {"n": "Paris"}})");
 *
 * Errors are exceptions, not result values. A failed call throws
 * strata::Error, which carries the status and the fields of the library's
 * error JSON (code, message, reason, path, entity, attribute, stage, and the
 * whole JSON text), read on the failing thread right after the call. Why
 * exceptions: every failure of this API is exceptional for the code around
 * it (bad input, a constraint, I/O) and carries more than a status, which an
 * exception keeps without a result type on every call; the handles' owners
 * are made by calls that can fail (Store::open), and a constructor reports
 * failure only by throwing; C++17 has no std::expected; and the calls are
 * coarse (each one crosses into the library and usually the store), so
 * throwing costs nothing that matters. Destructors never throw.
 *
 * Callbacks (observers, progress, trace, stage hooks) are std::function
 * objects owned by the library from registration on: they are destroyed
 * through its free_userdata when the library lets them go (observer removed,
 * container closed, hooks replaced, configuration freed and its containers
 * closed), as strata.h's OWNERSHIP section says. An exception thrown by a
 * callback never crosses into C: a stage hook's makes the stage fail
 * (strata::Error's status if it is one, else STRATA_ERR_CALLBACK, which
 * strata::Store::open then reports as "hookStatus"); an observer's,
 * progress's or trace's is swallowed (they return nothing to report it to).
 *
 * Threading and every other rule are strata.h's: a Store may be shared by
 * threads; a Context, and the Cursors and Prepareds made on it, belong to
 * one thread at a time.
 */
#ifndef STRATA_HPP
#define STRATA_HPP

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "strata.h"

namespace strata {

namespace detail {

/* A minimal reader of the flat JSON object strata_last_error() returns: the
   value of one top-level member, a string (unescaped) or a number (as text).
   Nested values are skipped. Returns false when the member is absent or null. */
class ErrorJson {
public:
    explicit ErrorJson(std::string_view text) : text_(text) {}

    bool member(std::string_view key, std::string &out) const {
        size_t i = skip_space(0);
        if (i >= text_.size() || text_[i] != '{') return false;
        i++;
        while (true) {
            i = skip_space(i);
            if (i >= text_.size() || text_[i] != '"') return false;
            std::string name;
            i = read_string(i, name);
            i = skip_space(i);
            if (i >= text_.size() || text_[i] != ':') return false;
            i = skip_space(i + 1);
            if (i >= text_.size()) return false;
            bool wanted = name == key;
            if (text_[i] == '"') {
                std::string value;
                i = read_string(i, value);
                if (wanted) { out = std::move(value); return true; }
            } else {
                size_t end = skip_value(i);
                if (wanted) {
                    std::string_view value = text_.substr(i, end - i);
                    if (value == "null") return false;
                    out = std::string(value);
                    return true;
                }
                i = end;
            }
            i = skip_space(i);
            if (i >= text_.size() || text_[i] != ',') return false;
            i++;
        }
    }

private:
    std::string_view text_;

    size_t skip_space(size_t i) const {
        while (i < text_.size() && (text_[i] == ' ' || text_[i] == '\n' || text_[i] == '\t' || text_[i] == '\r')) i++;
        return i;
    }

    static void put_utf8(std::string &out, unsigned long c) {
        if (c < 0x80) {
            out += static_cast<char>(c);
        } else if (c < 0x800) {
            out += static_cast<char>(0xC0 | (c >> 6));
            out += static_cast<char>(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            out += static_cast<char>(0xE0 | (c >> 12));
            out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (c & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (c >> 18));
            out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (c & 0x3F));
        }
    }

    unsigned long hex4(size_t i) const {
        if (i + 4 > text_.size()) return 0xFFFD;
        return std::strtoul(std::string(text_.substr(i, 4)).c_str(), nullptr, 16);
    }

    /* Reads the string starting at the quote at i; returns the index after its closing quote. */
    size_t read_string(size_t i, std::string &out) const {
        for (i++; i < text_.size() && text_[i] != '"'; i++) {
            char c = text_[i];
            if (c != '\\' || i + 1 >= text_.size()) { out += c; continue; }
            char e = text_[++i];
            switch (e) {
            case 'n': out += '\n'; break;
            case 't': out += '\t'; break;
            case 'r': out += '\r'; break;
            case 'b': out += '\b'; break;
            case 'f': out += '\f'; break;
            case 'u': {
                unsigned long c1 = hex4(i + 1);
                i += 4;
                if (c1 >= 0xD800 && c1 < 0xDC00 && i + 6 < text_.size() && text_[i + 1] == '\\' && text_[i + 2] == 'u') {
                    unsigned long c2 = hex4(i + 3);
                    if (c2 >= 0xDC00 && c2 < 0xE000) {
                        c1 = 0x10000 + ((c1 - 0xD800) << 10) + (c2 - 0xDC00);
                        i += 6;
                    }
                }
                put_utf8(out, c1);
                break;
            }
            default: out += e; break;   // \" \\ \/
            }
        }
        return i < text_.size() ? i + 1 : i;
    }

    /* Skips a number, literal, object or array starting at i. */
    size_t skip_value(size_t i) const {
        int depth = 0;
        for (; i < text_.size(); i++) {
            char c = text_[i];
            if (c == '"') { std::string ignored; i = read_string(i, ignored) - 1; continue; }
            if (c == '{' || c == '[') depth++;
            else if (c == '}' || c == ']') { if (depth == 0) return i; depth--; }
            else if (c == ',' && depth == 0) return i;
        }
        return i;
    }
};

}  // namespace detail

/** A failed Strata call: the status and the library's error JSON (docs/JSON.md §6). */
class Error : public std::runtime_error {
public:
    /** The error of the call that just failed on this thread with `status`. */
    explicit Error(strata_status status) : Error(status, last_error_json()) {}

    /** An error from a status and the error JSON text. */
    Error(strata_status status, std::string json)
        : std::runtime_error(describe(status, json)), status_(status), json_(std::move(json)) {
        detail::ErrorJson reader(json_);
        reader.member("code", code_);
        reader.member("message", message_);
        reader.member("reason", reason_);
        reader.member("path", path_);
        reader.member("entity", entity_);
        reader.member("attribute", attribute_);
        reader.member("stage", stage_);
    }

    /** The strata_status of the failure. */
    strata_status status() const noexcept { return status_; }
    /** The stable code ("invalid", "constraint", …). */
    const std::string &code() const noexcept { return code_; }
    /** The library's English message. */
    const std::string &message() const noexcept { return message_; }
    /** A finer stable reason ("unique_violation", "hook_failed"), or "". */
    const std::string &reason() const noexcept { return reason_; }
    /** A JSON pointer into the failing call's input ("/startDate"), or "". */
    const std::string &path() const noexcept { return path_; }
    /** The entity, attribute and migration stage the error names, or "". */
    const std::string &entity() const noexcept { return entity_; }
    const std::string &attribute() const noexcept { return attribute_; }
    const std::string &stage() const noexcept { return stage_; }
    /** The whole error JSON text. */
    const std::string &json() const noexcept { return json_; }

private:
    strata_status status_;
    std::string json_, code_, message_, reason_, path_, entity_, attribute_, stage_;

    static std::string last_error_json() {
        const char *text = strata_last_error();
        return text ? std::string(text) : std::string();
    }

    static std::string describe(strata_status status, const std::string &json) {
        std::string message;
        detail::ErrorJson(json).member("message", message);
        return std::string(strata_errstr(status)) + ": " + message;
    }
};

namespace detail {

inline void check(strata_status status) {
    if (status != STRATA_OK) throw Error(status);
}

/* The error of a moved-from (or closed) owner. */
[[noreturn]] inline void misuse(const char *what) {
    throw Error(STRATA_ERR_MISUSE, std::string("{\"code\":\"misuse\",\"status\":1,\"message\":\"") + what +
                                       " owns no handle (moved from or closed)\"}");
}

template <typename T> T *need(T *handle, const char *what) {
    if (handle == nullptr) misuse(what);
    return handle;
}

/* A std::function handed to the library as userdata, deleted by its free_userdata. */
template <typename Fn> void delete_callback(void *userdata) { delete static_cast<Fn *>(userdata); }

inline void text_callback(const char *text, void *userdata) {
    try {
        (*static_cast<std::function<void(std::string_view)> *>(userdata))(std::string_view(text));
    } catch (...) {
        // Nothing to report it to: a change, progress or trace callback returns nothing.
    }
}

}  // namespace detail

/** A string the library returned, freed with strata_free(). Move-only. */
class String {
public:
    String() noexcept = default;
    /** Takes ownership of a string the library returned (NULL: empty). */
    explicit String(char *owned) noexcept : text_(owned) {}
    String(String &&other) noexcept : text_(std::exchange(other.text_, nullptr)) {}
    String &operator=(String &&other) noexcept {
        if (this != &other) { strata_free(text_); text_ = std::exchange(other.text_, nullptr); }
        return *this;
    }
    String(const String &) = delete;
    String &operator=(const String &) = delete;
    ~String() { strata_free(text_); }

    /** The text ("" when empty); valid while this String owns it. */
    const char *c_str() const noexcept { return text_ ? text_ : ""; }
    std::string_view view() const noexcept { return c_str(); }
    std::string str() const { return c_str(); }
    operator std::string_view() const noexcept { return view(); }
    explicit operator bool() const noexcept { return text_ != nullptr; }
    /** Gives up ownership: the caller frees the result with strata_free(). */
    char *release() noexcept { return std::exchange(text_, nullptr); }
    /** The address of the owned pointer, for a C call's out-parameter (frees what it held). */
    char **out() noexcept { strata_free(std::exchange(text_, nullptr)); return &text_; }

private:
    char *text_ = nullptr;
};

class Context;
class Cursor;
class Prepared;

/** A stage hook: runs with a Context lent for the call (see strata_stage_fn). */
using StageHook = std::function<void(Context &)>;

/** A configuration (strata_config): a schema or migration plan and options. Move-only. */
class Config {
public:
    /** strata_config_new(): {"schema": …} or {"migrationPlan": …} and options (docs/JSON.md §1). */
    explicit Config(std::string_view json) {
        std::string text(json);
        detail::check(strata_config_new(text.c_str(), &config_));
    }
    Config(Config &&other) noexcept : config_(std::exchange(other.config_, nullptr)) {}
    Config &operator=(Config &&other) noexcept {
        if (this != &other) { strata_config_free(config_); config_ = std::exchange(other.config_, nullptr); }
        return *this;
    }
    Config(const Config &) = delete;
    Config &operator=(const Config &) = delete;
    ~Config() { strata_config_free(config_); }

    /** strata_config_set_progress(): `progress` hears each migration event (JSON); it must not call Strata. */
    Config &on_progress(std::function<void(std::string_view)> progress) {
        using Fn = std::function<void(std::string_view)>;
        auto *owned = new Fn(std::move(progress));
        // The library owns `owned` from here on, and frees it even when the call fails.
        detail::check(strata_config_set_progress(detail::need(config_, "strata::Config"), detail::text_callback,
                                                 owned, detail::delete_callback<Fn>));
        return *this;
    }

    /** strata_config_set_stage_hooks(): C++ hooks of a custom stage; either may be empty. */
    Config &stage_hooks(std::string_view stage, StageHook will_migrate, StageHook did_migrate = nullptr);

    strata_config *get() const noexcept { return config_; }

private:
    strata_config *config_ = nullptr;

    struct Hooks { StageHook will_migrate, did_migrate; };
    static strata_status run_hook(const StageHook &hook, strata_context *ctx);
};

/** A unit of work (strata_context). Move-only; one thread at a time. */
class Context {
public:
    /** Takes ownership of a context. */
    explicit Context(strata_context *owned) noexcept : ctx_(owned) {}
    /** A context the library lends (a stage hook's): used, never freed. */
    static Context borrow(strata_context *lent) noexcept { Context c(lent); c.owned_ = false; return c; }

    Context(Context &&other) noexcept
        : ctx_(std::exchange(other.ctx_, nullptr)), owned_(std::exchange(other.owned_, true)) {}
    Context &operator=(Context &&other) noexcept {
        if (this != &other) {
            reset();
            ctx_ = std::exchange(other.ctx_, nullptr);
            owned_ = std::exchange(other.owned_, true);
        }
        return *this;
    }
    Context(const Context &) = delete;
    Context &operator=(const Context &) = delete;
    ~Context() { reset(); }

    /** Frees the context now (unsaved changes are discarded). */
    void reset() noexcept {
        if (owned_) strata_context_free(ctx_);
        ctx_ = nullptr;
    }

    /** strata_insert(): the new (or upserted) object's identifier. */
    String insert(std::string_view entity, std::string_view object_json) {
        String id;
        detail::check(strata_insert(h(), std::string(entity).c_str(), std::string(object_json).c_str(), id.out()));
        return id;
    }
    /** strata_insert_many(): a JSON array of identifiers. */
    String insert_many(std::string_view entity, std::string_view array_json) {
        String ids;
        detail::check(strata_insert_many(h(), std::string(entity).c_str(), std::string(array_json).c_str(), ids.out()));
        return ids;
    }
    void update(std::string_view id, std::string_view patch_json) {
        detail::check(strata_update(h(), std::string(id).c_str(), std::string(patch_json).c_str()));
    }
    /** strata_delete() ("delete" is a keyword). */
    void remove(std::string_view id) { detail::check(strata_delete(h(), std::string(id).c_str())); }
    String get(std::string_view id) {
        String json;
        detail::check(strata_get(h(), std::string(id).c_str(), json.out()));
        return json;
    }
    String fetch(std::string_view descriptor_json) {
        String json;
        detail::check(strata_fetch(h(), std::string(descriptor_json).c_str(), json.out()));
        return json;
    }
    int64_t count(std::string_view descriptor_json) {
        int64_t n = 0;
        detail::check(strata_fetch_count(h(), std::string(descriptor_json).c_str(), &n));
        return n;
    }
    String identifiers(std::string_view descriptor_json) {
        String json;
        detail::check(strata_fetch_identifiers(h(), std::string(descriptor_json).c_str(), json.out()));
        return json;
    }
    String explain(std::string_view descriptor_json) {
        String json;
        detail::check(strata_explain(h(), std::string(descriptor_json).c_str(), json.out()));
        return json;
    }
    /** strata_delete_where_count(); an empty predicate deletes every object of the entity. */
    int64_t delete_where(std::string_view entity, std::string_view predicate_json = {}) {
        int64_t n = 0;
        std::string predicate(predicate_json);
        detail::check(strata_delete_where_count(h(), std::string(entity).c_str(),
                                                predicate.empty() ? nullptr : predicate.c_str(), &n));
        return n;
    }
    int64_t update_where(std::string_view entity, std::string_view request_json) {
        int64_t n = 0;
        detail::check(strata_update_where(h(), std::string(entity).c_str(), std::string(request_json).c_str(), &n));
        return n;
    }
    void save() { detail::check(strata_save(h())); }
    void rollback() { detail::check(strata_rollback(h())); }
    bool has_changes() { return strata_has_changes(h()) == 1; }

    /** strata_fetch_history(); an empty descriptor fetches every transaction. */
    String history(std::string_view descriptor_json = {}) {
        String json;
        std::string descriptor(descriptor_json);
        detail::check(strata_fetch_history(h(), descriptor.empty() ? nullptr : descriptor.c_str(), json.out()));
        return json;
    }
    String explain_history(std::string_view descriptor_json = {}) {
        String json;
        std::string descriptor(descriptor_json);
        detail::check(strata_explain_history(h(), descriptor.empty() ? nullptr : descriptor.c_str(), json.out()));
        return json;
    }
    void delete_history(std::string_view descriptor_json) {
        detail::check(strata_delete_history(h(), std::string(descriptor_json).c_str()));
    }
    void set_author(const char *author) { detail::check(strata_context_set_author(h(), author)); }
    void set_name(const char *name) { detail::check(strata_context_set_name(h(), name)); }

    /** strata_fetch_cursor(). */
    Cursor cursor(std::string_view descriptor_json);
    /** strata_prepare(). */
    Prepared prepare(std::string_view descriptor_json);

    strata_context *get() const noexcept { return ctx_; }

private:
    strata_context *ctx_ = nullptr;
    bool owned_ = true;
    strata_context *h() const { return detail::need(ctx_, "strata::Context"); }
};

/** The objects of one fetch, read in batches on one snapshot (strata_fetch_cursor). Move-only. */
class Cursor {
public:
    explicit Cursor(strata_cursor *owned) noexcept : cursor_(owned) {}
    Cursor(Cursor &&other) noexcept : cursor_(std::exchange(other.cursor_, nullptr)) {}
    Cursor &operator=(Cursor &&other) noexcept {
        if (this != &other) { strata_cursor_free(cursor_); cursor_ = std::exchange(other.cursor_, nullptr); }
        return *this;
    }
    Cursor(const Cursor &) = delete;
    Cursor &operator=(const Cursor &) = delete;
    ~Cursor() { strata_cursor_free(cursor_); }

    /** The next batch (at most batch_size objects) as a JSON array; "[]" at the end. */
    String next(int64_t batch_size) {
        String json;
        detail::check(strata_cursor_next(detail::need(cursor_, "strata::Cursor"), batch_size, json.out()));
        return json;
    }
    /** The next batch into `batch`; false at the end, where the cursor's read ends and it
        owns nothing more (a later call throws STRATA_ERR_MISUSE). */
    bool next(int64_t batch_size, String &batch) {
        batch = next(batch_size);
        if (batch.view() != "[]") return true;
        reset();
        return false;
    }
    /** Ends the cursor's read now. */
    void reset() noexcept { strata_cursor_free(std::exchange(cursor_, nullptr)); }

private:
    strata_cursor *cursor_ = nullptr;
};

/** A prepared fetch (strata_prepare), run with new bindings. Move-only. */
class Prepared {
public:
    explicit Prepared(strata_prepared *owned) noexcept : prepared_(owned) {}
    Prepared(Prepared &&other) noexcept : prepared_(std::exchange(other.prepared_, nullptr)) {}
    Prepared &operator=(Prepared &&other) noexcept {
        if (this != &other) { strata_prepared_free(prepared_); prepared_ = std::exchange(other.prepared_, nullptr); }
        return *this;
    }
    Prepared(const Prepared &) = delete;
    Prepared &operator=(const Prepared &) = delete;
    ~Prepared() { strata_prepared_free(prepared_); }

    /** strata_prepared_fetch(); empty bindings: the descriptor's own. */
    String fetch(std::string_view bindings_json = {}) {
        String json;
        std::string bindings(bindings_json);
        detail::check(strata_prepared_fetch(h(), bindings.empty() ? nullptr : bindings.c_str(), json.out()));
        return json;
    }
    int64_t count(std::string_view bindings_json = {}) {
        int64_t n = 0;
        std::string bindings(bindings_json);
        detail::check(strata_prepared_fetch_count(h(), bindings.empty() ? nullptr : bindings.c_str(), &n));
        return n;
    }
    String identifiers(std::string_view bindings_json = {}) {
        String json;
        std::string bindings(bindings_json);
        detail::check(strata_prepared_fetch_identifiers(h(), bindings.empty() ? nullptr : bindings.c_str(), json.out()));
        return json;
    }

private:
    strata_prepared *prepared_ = nullptr;
    strata_prepared *h() const { return detail::need(prepared_, "strata::Prepared"); }
};

inline Cursor Context::cursor(std::string_view descriptor_json) {
    strata_cursor *cursor = nullptr;
    detail::check(strata_fetch_cursor(h(), std::string(descriptor_json).c_str(), &cursor));
    return Cursor(cursor);
}

inline Prepared Context::prepare(std::string_view descriptor_json) {
    strata_prepared *prepared = nullptr;
    detail::check(strata_prepare(h(), std::string(descriptor_json).c_str(), &prepared));
    return Prepared(prepared);
}

inline strata_status Config::run_hook(const StageHook &hook, strata_context *ctx) {
    if (!hook) return STRATA_OK;
    Context lent = Context::borrow(ctx);
    try {
        hook(lent);
        return STRATA_OK;
    } catch (const Error &error) {
        return error.status();
    } catch (...) {
        return STRATA_ERR_CALLBACK;
    }
}

inline Config &Config::stage_hooks(std::string_view stage, StageHook will_migrate, StageHook did_migrate) {
    bool will = static_cast<bool>(will_migrate), did = static_cast<bool>(did_migrate);
    auto *owned = new Hooks{std::move(will_migrate), std::move(did_migrate)};
    strata_stage_fn will_fn = [](strata_context *ctx, void *userdata) {
        return run_hook(static_cast<Hooks *>(userdata)->will_migrate, ctx);
    };
    strata_stage_fn did_fn = [](strata_context *ctx, void *userdata) {
        return run_hook(static_cast<Hooks *>(userdata)->did_migrate, ctx);
    };
    // The library owns `owned` from here on, and frees it even when the call fails.
    detail::check(strata_config_set_stage_hooks(detail::need(config_, "strata::Config"), std::string(stage).c_str(),
                                                will ? will_fn : nullptr, did ? did_fn : nullptr, owned,
                                                detail::delete_callback<Hooks>));
    return *this;
}

/** A change observer (strata_observe); removed by its destructor. Move-only. */
class Observer {
public:
    Observer() noexcept = default;
    explicit Observer(strata_observer *owned) noexcept : observer_(owned) {}
    Observer(Observer &&other) noexcept : observer_(std::exchange(other.observer_, nullptr)) {}
    Observer &operator=(Observer &&other) noexcept {
        if (this != &other) { strata_observer_remove(observer_); observer_ = std::exchange(other.observer_, nullptr); }
        return *this;
    }
    Observer(const Observer &) = delete;
    Observer &operator=(const Observer &) = delete;
    /** Removes the observer (after its store was closed: only frees the handle). */
    ~Observer() { strata_observer_remove(observer_); }
    void reset() noexcept { strata_observer_remove(std::exchange(observer_, nullptr)); }

private:
    strata_observer *observer_ = nullptr;
};

/** An open store (strata_container), shared by threads; closed by its destructor. Move-only. */
class Store {
public:
    /** strata_open(): opens, creates or migrates the store at `path` (a file or a PostgreSQL URI). */
    static Store open(const std::string &path, const Config &config) {
        strata_container *container = nullptr;
        detail::check(strata_open(path.c_str(), detail::need(config.get(), "strata::Config"), &container));
        return Store(container);
    }
    /** strata_open() with a configuration's JSON. */
    static Store open(const std::string &path, std::string_view config_json) { return open(path, Config(config_json)); }

    explicit Store(strata_container *owned) noexcept : container_(owned) {}
    Store(Store &&other) noexcept : container_(std::exchange(other.container_, nullptr)) {}
    Store &operator=(Store &&other) noexcept {
        if (this != &other) { strata_close(container_); container_ = std::exchange(other.container_, nullptr); }
        return *this;
    }
    Store(const Store &) = delete;
    Store &operator=(const Store &) = delete;
    /** strata_close(): observers end; contexts still alive keep the store open until freed. */
    ~Store() { strata_close(container_); }
    void close() noexcept { strata_close(std::exchange(container_, nullptr)); }

    Context context() {
        strata_context *ctx = nullptr;
        detail::check(strata_context_new(h(), &ctx));
        return Context(ctx);
    }
    String schema() {
        String json;
        detail::check(strata_container_schema(h(), json.out()));
        return json;
    }
    /** strata_observe(): `changes` gets each change set's JSON; filter as strata_observe() takes it. */
    Observer observe(std::function<void(std::string_view)> changes, std::string_view filter_json = {}) {
        using Fn = std::function<void(std::string_view)>;
        auto *owned = new Fn(std::move(changes));
        std::string filter(filter_json);
        strata_observer *observer = nullptr;
        // The library owns `owned` from here on, and frees it even when the call fails.
        detail::check(strata_observe(h(), filter.empty() ? nullptr : filter.c_str(), detail::text_callback, owned,
                                     detail::delete_callback<Fn>, &observer));
        return Observer(observer);
    }
    void poll_changes() { detail::check(strata_poll_changes(h())); }
    /** strata_set_trace(): `trace` sees every SQL statement (any thread; must not call Strata); empty removes it. */
    void set_trace(std::function<void(std::string_view)> trace) {
        using Fn = std::function<void(std::string_view)>;
        if (!trace) {
            detail::check(strata_set_trace(h(), nullptr, nullptr, nullptr));
            return;
        }
        detail::check(strata_set_trace(h(), detail::text_callback, new Fn(std::move(trace)), detail::delete_callback<Fn>));
    }

    strata_container *get() const noexcept { return container_; }

private:
    strata_container *container_ = nullptr;
    strata_container *h() const { return detail::need(container_, "strata::Store"); }
};

/** strata_version(). */
inline std::string_view version() noexcept { return strata_version(); }

/** strata_infer_migration(). */
inline String infer_migration(std::string_view from_schema_json, std::string_view to_schema_json) {
    String json;
    detail::check(strata_infer_migration(std::string(from_schema_json).c_str(), std::string(to_schema_json).c_str(),
                                         json.out()));
    return json;
}

/** strata_check_store(): what opening the store with `config` would do, without writing. */
inline String check_store(const std::string &path, const Config &config) {
    String json;
    detail::check(strata_check_store(path.c_str(), detail::need(config.get(), "strata::Config"), json.out()));
    return json;
}

}  // namespace strata

#endif /* STRATA_HPP */
