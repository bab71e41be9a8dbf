#include "internal.h"

unsigned jfr_version_number(void) { return JFR_VERSION_NUMBER; }
const char *jfr_version_string(void) { return JFR_VERSION_STRING; }

const char *jfr_status_name(jfr_status s) {
    switch (s) {
#define JFR_STATUS_NAME_(n, name, msg) case JFR_##name: return #name;
        JFR_STATUS_MAP(JFR_STATUS_NAME_)
#undef JFR_STATUS_NAME_
    }
    return NULL;
}

const char *jfr_status_str(jfr_status s) {
    switch (s) {
#define JFR_STATUS_STR_(n, name, msg) case JFR_##name: return msg;
        JFR_STATUS_MAP(JFR_STATUS_STR_)
#undef JFR_STATUS_STR_
    }
    return "unknown status";
}
