/** GET /instance: what the caller may do with this instance's settings. */
export function presentInstance(canChangeSettings: boolean) {
  return { can_change_settings: canChangeSettings };
}
