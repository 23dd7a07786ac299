// The demo stores' catalogues (issue 27): what each shop sells, so that a report by product,
// variant, SKU or category is worth reading on `npm start`. One catalogue a kind of shop, in the
// order of DEFAULT_DEMO_STORES' price levels: a concept store, a leather and ceramics workshop, a
// fine grocer. Product and variant ids are numbers as WooCommerce gives them.

export interface DemoVariant {
  readonly id: string;
  readonly name: string;
  readonly sku: string;
}

export interface DemoProduct {
  readonly id: string;
  readonly name: string;
  /** One or two categories (L5: a product may be in several). */
  readonly categories: readonly string[];
  /** Empty for a product without variants (its SKU is the product's own). */
  readonly variants: readonly DemoVariant[];
  readonly sku: string;
  /** How often it sells, relative to the shop's other products. */
  readonly weight: number;
}

type Row = readonly [name: string, categories: string, variants: string, weight: number];

/** A catalogue from compact rows: categories and variants separated by `|`. */
function catalogue(prefix: string, firstId: number, rows: readonly Row[]): DemoProduct[] {
  return rows.map(([name, categories, variants, weight], i) => {
    const id = firstId + i * 10;
    const sku = `${prefix}-${String(i + 1).padStart(3, '0')}`;
    const names = variants === '' ? [] : variants.split('|');
    return {
      id: String(id),
      name,
      categories: categories.split('|'),
      sku,
      weight,
      variants: names.map((variant, v) => ({
        id: String(id + v + 1),
        name: variant,
        sku: `${sku}-${variant
          .normalize('NFD')
          .replace(/[^A-Za-z0-9]/g, '')
          .slice(0, 4)
          .toUpperCase()}`,
      })),
    };
  });
}

const CONCEPT_STORE = catalogue('PAR', 1201, [
  ['T-shirt brodé « Paris »', 'Vêtements|Nouveautés', 'S|M|L|XL', 9],
  ['Sweat à capuche coton bio', 'Vêtements|Coton bio', 'S|M|L|XL', 6],
  ['Tote bag en lin', 'Accessoires|Coton bio', '', 8],
  ['Casquette délavée', 'Accessoires', 'Bleu|Sable|Noir', 4],
  ['Bougie parfumée figue', 'Maison|Idées cadeaux', '180 g|300 g', 7],
  ['Carnet A5 pointillé', 'Papeterie', 'Kraft|Noir|Terracotta', 6],
  ['Affiche « Les quais »', 'Papeterie|Maison', '30 × 40 cm|50 × 70 cm', 3],
  ['Mug émaillé', 'Maison|Idées cadeaux', '', 6],
  ['Chaussettes rayées', 'Vêtements', '36-40|41-46', 7],
  ['Porte-clés en laiton', 'Accessoires|Idées cadeaux', '', 5],
  ['Plaid en laine recyclée', 'Maison', 'Moutarde|Gris', 2],
  ['Coffret cadeau surprise', 'Idées cadeaux', '', 2],
  ['Foulard imprimé', 'Accessoires|Nouveautés', '', 3],
  ['Trousse zippée', 'Accessoires|Papeterie', '', 4],
]);

const WORKSHOP = catalogue('LYO', 2201, [
  ['Sac cabas en cuir', 'Maroquinerie', 'Cognac|Noir|Naturel', 5],
  ['Portefeuille compact', 'Maroquinerie|Idées cadeaux', 'Cognac|Noir', 7],
  ['Ceinture cuir pleine fleur', 'Maroquinerie', '85 cm|95 cm|105 cm', 5],
  ['Porte-cartes', 'Maroquinerie|Idées cadeaux', '', 9],
  ['Bol en grès', 'Céramique|Arts de la table', 'Blanc|Céladon', 8],
  ['Assiette plate en grès', 'Céramique|Arts de la table', '', 6],
  ['Vase soliflore', 'Céramique|Décoration', '', 4],
  ['Théière en fonte', 'Arts de la table', '', 2],
  ['Set de 4 tasses', 'Céramique|Arts de la table', '', 3],
  ['Sacoche pour ordinateur', 'Maroquinerie', '13 pouces|15 pouces', 2],
  ['Étui à lunettes', 'Maroquinerie', '', 4],
  ['Lampe à poser en céramique', 'Céramique|Décoration|Éclairage', '', 1],
  ['Atelier découverte (bon cadeau)', 'Ateliers|Idées cadeaux', '', 2],
]);

const GROCER = catalogue('BDX', 3201, [
  ['Huile d’olive vierge extra', 'Épicerie salée|Huiles et vinaigres', '50 cl|1 l', 8],
  ['Vinaigre de Banyuls', 'Épicerie salée|Huiles et vinaigres', '', 4],
  ['Miel de lavande', 'Épicerie sucrée|Produits locaux', '250 g|500 g', 7],
  ['Confiture de figues', 'Épicerie sucrée', '', 7],
  ['Canelés de Bordeaux (boîte de 6)', 'Épicerie sucrée|Produits locaux', '', 9],
  ['Thé vert Sencha', 'Thés et cafés|Bio', '100 g|250 g', 6],
  ['Café de spécialité en grains', 'Thés et cafés', '250 g|1 kg', 8],
  ['Chocolat noir 70 %', 'Épicerie sucrée|Bio', '', 9],
  ['Sel de Guérande aux herbes', 'Épicerie salée', '', 4],
  ['Rillettes de canard', 'Épicerie salée|Produits locaux', '', 5],
  ['Vin rouge Bordeaux AOC', 'Vins|Produits locaux', '75 cl|Magnum', 6],
  ['Pâtes artisanales', 'Épicerie salée', 'Fusilli|Linguine|Orecchiette', 5],
  ['Panier gourmand', 'Coffrets|Idées cadeaux', 'Petit|Grand', 2],
  ['Sirop de citron', 'Épicerie sucrée|Bio', '', 3],
  ['Biscuits au beurre salé', 'Épicerie sucrée', '', 6],
]);

/** The catalogue of the store with this index (stores cycle through the three kinds of shop). */
export const CATALOGUES: readonly (readonly DemoProduct[])[] = [CONCEPT_STORE, WORKSHOP, GROCER];
