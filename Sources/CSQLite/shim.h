#include <sqlite3.h>

/* sqlite3_db_config is variadic, which Swift cannot call: sets an on/off option
   (SQLITE_DBCONFIG_DEFENSIVE, _TRUSTED_SCHEMA, _ENABLE_VIEW, _ENABLE_TRIGGER, ...)
   and returns its new state, or -1 when SQLite refused the option. */
static inline int strata_sqlite3_db_config_flag(sqlite3 *db, int op, int on) {
    int state = -1;
    if (sqlite3_db_config(db, op, on, &state) != SQLITE_OK) return -1;
    return state;
}
