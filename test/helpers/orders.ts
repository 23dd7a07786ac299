// An order as a line of an import file, with the fields tests rarely vary set once.
export const orderLine = (id: string, createdAt: string, email?: string, store = 'https://a.example') => ({
  store,
  id,
  created_at: createdAt,
  status: 'completed',
  items: 1,
  total: '10.00',
  ...(email === undefined ? {} : { customer_email: email }),
});
