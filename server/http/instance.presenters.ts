/** GET /instance: what the caller may do with this instance's settings, and whether instance-wide actions are an administrator's. */
export function presentInstance(canChangeSettings: boolean, administratorsOnly: boolean) {
  return { can_change_settings: canChangeSettings, administrators_only: administratorsOnly };
}
