/*
 * The names Android's getpwuid() gives app ids below 10000 (AID_APP_START), which seapp_contexts'
 * user= compares with. Android 14's android_ids table (libcutils android_filesystem_config.h as
 * fs_config_generator.py turns it into names: lower case, the unused ids and the range limits
 * left out, media_drm/media_ex/media_codec spelled mediadrm/mediaex/mediacodec), then bionic's
 * OEM ranges.
 *
 * Not covered: the device's /{system,vendor,odm,product,system_ext}/etc/passwd (vendor AIDs from
 * config.fs, 2900-2999, 5000-5999 and 6000-7999), which bionic reads before inventing oem_N, and
 * the wider OEM range of devices that first shipped before API 29. seapp_contexts lines do not
 * name such users in practice; their uids get oem_N here or no name at all.
 */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

struct aid {
	uint32_t id;
	const char *name;
};

/* Sorted by id, for bsearch. */
/* clang-format off */
static const struct aid android_ids[] = {
	{ 0, "root" }, { 1, "daemon" }, { 2, "bin" },
	{ 3, "sys" }, /* in the 2023 header; whether android-14.0.0_r50 has it is not established */
	{ 1000, "system" }, { 1001, "radio" }, { 1002, "bluetooth" }, { 1003, "graphics" },
	{ 1004, "input" }, { 1005, "audio" }, { 1006, "camera" }, { 1007, "log" },
	{ 1008, "compass" }, { 1009, "mount" }, { 1010, "wifi" }, { 1011, "adb" },
	{ 1012, "install" }, { 1013, "media" }, { 1014, "dhcp" }, { 1015, "sdcard_rw" },
	{ 1016, "vpn" }, { 1017, "keystore" }, { 1018, "usb" }, { 1019, "drm" },
	{ 1020, "mdnsr" }, { 1021, "gps" }, { 1023, "media_rw" }, { 1024, "mtp" },
	{ 1026, "drmrpc" }, { 1027, "nfc" }, { 1028, "sdcard_r" }, { 1029, "clat" },
	{ 1030, "loop_radio" }, { 1031, "mediadrm" }, { 1032, "package_info" },
	{ 1033, "sdcard_pics" }, { 1034, "sdcard_av" }, { 1035, "sdcard_all" }, { 1036, "logd" },
	{ 1037, "shared_relro" }, { 1038, "dbus" }, { 1039, "tlsdate" }, { 1040, "mediaex" },
	{ 1041, "audioserver" }, { 1042, "metrics_coll" }, { 1043, "metricsd" },
	{ 1044, "webserv" }, { 1045, "debuggerd" }, { 1046, "mediacodec" },
	{ 1047, "cameraserver" }, { 1048, "firewall" }, { 1049, "trunks" }, { 1050, "nvram" },
	{ 1051, "dns" }, { 1052, "dns_tether" }, { 1053, "webview_zygote" },
	{ 1054, "vehicle_network" }, { 1055, "media_audio" }, { 1056, "media_video" },
	{ 1057, "media_image" }, { 1058, "tombstoned" }, { 1059, "media_obb" }, { 1060, "ese" },
	{ 1061, "ota_update" }, { 1062, "automotive_evs" }, { 1063, "lowpan" }, { 1064, "hsm" },
	{ 1065, "reserved_disk" }, { 1066, "statsd" }, { 1067, "incidentd" },
	{ 1068, "secure_element" }, { 1069, "lmkd" }, { 1070, "llkd" }, { 1071, "iorapd" },
	{ 1072, "gpu_service" }, { 1073, "network_stack" }, { 1074, "gsid" },
	{ 1075, "fsverity_cert" }, { 1076, "credstore" }, { 1077, "external_storage" },
	{ 1078, "ext_data_rw" }, { 1079, "ext_obb_rw" }, { 1080, "context_hub" },
	{ 1081, "virtualizationservice" }, { 1082, "artd" }, { 1083, "uwb" },
	{ 1084, "thread_network" }, { 1085, "diced" }, { 1086, "dmesgd" }, { 1087, "jc_weaver" },
	{ 1088, "jc_strongbox" }, { 1089, "jc_identitycred" }, { 1090, "sdk_sandbox" },
	{ 1091, "security_log_writer" }, { 1092, "prng_seeder" },
	{ 2000, "shell" }, { 2001, "cache" }, { 2002, "diag" },
	{ 3001, "net_bt_admin" }, { 3002, "net_bt" }, { 3003, "inet" }, { 3004, "net_raw" },
	{ 3005, "net_admin" }, { 3006, "net_bw_stats" }, { 3007, "net_bw_acct" },
	{ 3009, "readproc" }, { 3010, "wakelock" }, { 3011, "uhid" }, { 3012, "readtracefs" },
	{ 9997, "everybody" }, { 9998, "misc" }, { 9999, "nobody" },
};
/* clang-format on */

static int aid_cmp(const void *key, const void *elem)
{
	uint32_t id = *(const uint32_t *)key;
	const struct aid *a = elem;

	return id < a->id ? -1 : id > a->id;
}

const char *seapp_aid_name(uint32_t appid, char buf[16])
{
	const struct aid *a =
		bsearch(&appid, android_ids, sizeof(android_ids) / sizeof(android_ids[0]),
			sizeof(android_ids[0]), aid_cmp);

	if (a)
		return a->name;
	/* bionic's is_oem_id: AID_OEM_RESERVED_{,2_}START..END */
	if ((appid >= 2900 && appid <= 2999) || (appid >= 5000 && appid <= 5999)) {
		snprintf(buf, 16, "oem_%u", appid);
		return buf;
	}
	return NULL;
}
